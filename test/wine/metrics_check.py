#!/usr/bin/python3
"""metrics_check.py - scrapes csi-proxy.exe's /metrics from the Linux side
(urllib) and checks it with Prometheus' own parser
(prometheus_client.parser.text_string_to_metric_families).

  metrics_check.py wait PORT SECONDS      exit 0 once /metrics answers 200
  metrics_check.py check PORT EXPECT.json  TAP-like lines, exit 0 if all ok
  metrics_check.py status PORT PATH [METHOD] [HOST]   prints the HTTP status
                                           (connecting to HOST, Host: 127.0.0.1:PORT)

EXPECT.json: {"samples": [[name, {labels}, value], ...],  exact values
              "at_least": [[name, {labels}, value], ...],
              "absent": [[name, {labels}], ...]}     no sample with these labels
Every histogram is also checked: buckets are upstream's bounds, cumulative,
and +Inf == _count.
"""
import json
import sys
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

BOUNDS = ["0.001", "0.01", "0.1", "0.3", "0.6", "1", "3", "6", "9", "20", "30", "60", "90",
          "120", "+Inf"]


def fetch(port, path="/metrics", method="GET", host="127.0.0.1"):
    req = urllib.request.Request(f"http://{host}:{port}{path}", method=method)
    # The Host header always names the address served: a request that
    # reaches the port on another local address (127.0.0.2) is told apart
    # by where it arrived, not by what it claims.
    req.add_header("Host", f"127.0.0.1:{port}")
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.headers.get("Content-Type"), r.read().decode("utf-8")


def status(port, path, method="GET", host="127.0.0.1"):
    try:
        return fetch(port, path, method, host)[0]
    except urllib.error.HTTPError as e:
        return e.code
    except (urllib.error.URLError, OSError) as e:
        return f"error: {e}"


def samples(text):
    out = []
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.append((fam, s.name, dict(s.labels), s.value))
    return out


def main():
    cmd, port = sys.argv[1], int(sys.argv[2])
    if cmd == "wait":
        deadline = time.time() + float(sys.argv[3])
        while time.time() < deadline:
            if status(port, "/metrics") == 200:
                return 0
            time.sleep(0.3)
        return 1
    if cmd == "status":
        print(status(port, sys.argv[3], *(sys.argv[4:6])))
        return 0
    want = json.load(open(sys.argv[3]))
    code, ctype, text = fetch(port)
    passed = failed = 0

    def check(name, cond, detail=""):
        nonlocal passed, failed
        if cond:
            passed += 1
            print(f"ok - {name}")
        else:
            failed += 1
            print(f"not ok - {name}")
            if detail:
                print("    " + str(detail)[:2000].replace("\n", "\n    "))

    check("GET /metrics: 200, text format 0.0.4",
          code == 200 and ctype == "text/plain; version=0.0.4; charset=utf-8", f"{code} {ctype}")
    try:
        got = samples(text)
        check("Prometheus' parser reads the whole text", True)
    except Exception as e:  # noqa: BLE001 - any parse error is the finding
        check("Prometheus' parser reads the whole text", False, f"{e}\n{text}")
        print(f"{passed} passed, {failed} failed")
        return 1

    def find(name, labels):
        return [v for _, n, ls, v in got if n == name and all(ls.get(k) == x for k, x in labels.items())]

    for name, labels, value in want.get("samples", []):
        vals = find(name, labels)
        check(f"{name}{labels} == {value}", vals == [value], f"found {vals}")
    for name, labels, value in want.get("at_least", []):
        vals = find(name, labels)
        check(f"{name}{labels} >= {value}", len(vals) == 1 and vals[0] >= value, f"found {vals}")
    for name, labels in want.get("absent", []):
        vals = find(name, labels)
        check(f"no {name}{labels}", vals == [], f"found {vals}")

    # every histogram series: upstream's bounds, cumulative, +Inf == count
    series = {}
    for fam, n, ls, v in got:
        if fam.type != "histogram":
            continue
        key = tuple(sorted((k, x) for k, x in ls.items() if k != "le"))
        series.setdefault(key, {"le": [], "count": None})
        if n.endswith("_bucket"):
            series[key]["le"].append((ls["le"], v))
        elif n.endswith("_count"):
            series[key]["count"] = v
    bad = []
    for key, s in series.items():
        les = [le for le, _ in s["le"]]
        vals = [v for _, v in s["le"]]
        norm = [("+Inf" if le == "+Inf" else format(float(le), "g")) for le in les]
        if norm != [("+Inf" if b == "+Inf" else format(float(b), "g")) for b in BOUNDS] or \
                vals != sorted(vals) or vals[-1] != s["count"]:
            bad.append((key, s))
    check(f"{len(series)} histogram series: upstream's 14 bounds + +Inf, cumulative, "
          "+Inf == _count", series and not bad, bad)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
