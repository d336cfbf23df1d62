#!/usr/bin/env python3
"""Turns the JSON lines scripts/bench.sh collected into the bench table
(stdout) and a JSON file.

    report.py bench RESULTS.jsonl OUT.json
    report.py load  RESULTS.jsonl OUT.json

Each input line is one JSON object with a "name" (tool results) or a
"kind" (facts scripts/bench.sh measured itself). Nothing here measures
anything; it only arranges and compares.
"""
import json
import sys

# name -> label, in table order
GRPC_ROWS = [
    ("seq", "sequential, 1 connection"),
    ("seq-nobdp", "sequential, 1 connection, no BDP ping"),
    ("conc8", "8 concurrent calls, 1 connection"),
    ("conc32", "32 concurrent calls, 1 connection"),
    ("clients8", "8 clients, 8 connections"),
    ("clients32", "32 clients, 32 connections"),
    ("churn", "connect, call, close"),
]

FLAT_PCT = 5.0

HOST_LABELS = {
    "host-resolve": "full link resolution (CreateFileW + GUID + names): only when a component is a link",
    "host-final-dos": "CreateFileW + GetFinalPathNameByHandleW(VOLUME_NAME_DOS)",
    "host-attrs": "GetFileAttributesW on each path component (the resolver's fast path)",
    "host-exists": "GetFileAttributesExW (the answer itself)",
    "host-drivetype": "GetDriveTypeW on the drive root (for comparison; not called)",
}


def load_lines(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                out.append(json.loads(line))
    return out


def pick(lines, key, value):
    return [x for x in lines if x.get(key) == value]


def one(lines, key, value):
    xs = pick(lines, key, value)
    return xs[-1] if xs else None


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def pct(a, b):
    return (b - a) * 100.0 / a if a else float("inf")


def load_verdict(a, b):
    """a, b: the load checkpoints (first chunk, last chunk). Memory is compared
    by the mean VmRSS sampled while each chunk ran (a single settled sample
    swings by MBs with the heap's state); handles by the settled count."""
    d_mean = pct(a["mean_rss_kb"], b["mean_rss_kb"])
    d_rss = pct(a["rss_kb"], b["rss_kb"])
    d_h = pct(a["handles"], b["handles"]) if a["handles"] > 0 else float("inf")
    flat = abs(d_mean) <= FLAT_PCT and abs(d_h) <= FLAT_PCT
    return {
        "from_calls": a["calls"],
        "to_calls": b["calls"],
        "mean_rss_kb_under_load": [a["mean_rss_kb"], b["mean_rss_kb"]],
        "mean_rss_change_pct": round(d_mean, 2),
        "settled_rss_kb": [a["rss_kb"], b["rss_kb"]],
        "settled_rss_change_pct": round(d_rss, 2),
        "hwm_kb": [a["hwm_kb"], b["hwm_kb"]],
        "handles": [a["handles"], b["handles"]],
        "handles_change_pct": round(d_h, 2),
        "threads": [a.get("threads"), b.get("threads")],
        "get_process_handle_count": [a.get("gphc"), b.get("gphc")],
        "limit_pct": FLAT_PCT,
        "flat": flat,
        "verdict": "FLAT" if flat else "NOT FLAT",
    }


def print_load(title, checkpoints, v, load_runs):
    print(title)
    print(f"  {'calls':>9}  {'calls/s':>7}  {'RSS under load (mean/max KiB)':>29}  {'settled RSS':>11}  "
          f"{'VmHWM':>6}  {'handles':>7}  {'threads':>7}  {'GetProcessHandleCount':>21}")
    runs = {r.get("to"): r for r in load_runs}
    for c in checkpoints:
        r = runs.get(c["calls"], {})
        under = f"{c['mean_rss_kb']} / {c['max_rss_kb']}"
        print(f"  {c['calls']:>9}  {r.get('calls_per_s', 0):>7.0f}  {under:>29}  {c['rss_kb']:>11}  "
              f"{c['hwm_kb']:>6}  {c['handles']:>7}  {c.get('threads', -1):>7}  {c.get('gphc', -1):>21}")
    failed = sum(r["errors"] for r in load_runs)
    conns = sum(r["conns"] for r in load_runs)
    calls = sum(r["calls"] for r in load_runs)
    print(f"  {calls} calls on {conns} connections, {failed} failed")
    print(f"  {v['from_calls']} -> {v['to_calls']} calls: RSS under load {v['mean_rss_change_pct']:+.1f}% "
          f"(settled {v['settled_rss_change_pct']:+.1f}%), handles {v['handles_change_pct']:+.1f}% "
          f"(limit +-{FLAT_PCT:.0f}%): {v['verdict']}")
    print("  (handles: the process's live entries in wineserver's handle table, from "
          "NtQuerySystemInformation; Wine 8's GetProcessHandleCount answers 0 for every process)")


GO_ROWS = [
    ("go-seq", "sequential, 1 long-lived client (+1 idle client on another pipe)"),
    ("go-conc8", "8 calls at once on 1 connection"),
    ("go-clients8", "8 clients on 8 connections"),
    ("go-churn", "connect + first call + close"),
]


def ratio(a, b):
    return a / b if (a is not None and b) else None


def cpu_of(x):
    """A row's server CPU in ms: the scheduler's ns counters when the same
    threads ran before and after (exact), else clock ticks (10 ms steps)."""
    if x.get("tasks_same") and x.get("server_cpu_ns_ms") is not None:
        return x["server_cpu_ns_ms"]
    return x["server_cpu_ms"]


def go_build(lines, build):
    """Medians over the rounds of one build's real-client facts."""
    rows = [x for x in lines if x.get("kind") == "go" and x.get("build") == build]
    if not rows:
        return None
    rounds = sorted({x["round"] for x in rows})
    out = {"rounds": len(rounds), "rows": {}, "per_round": {}}
    for label, _ in GO_ROWS:
        rs = [x for x in rows if x["label"] == label]
        if not rs:
            continue
        out["rows"][label] = {
            "calls_per_s": median([x["calls_per_s"] for x in rs]),
            "p50_us": median([x["p50_us"] for x in rs]),
            "p99_us": median([x["p99_us"] for x in rs]),
            "server_cpu_ms": median([cpu_of(x) for x in rs]),
            "server_cpu_us_per_call": median([cpu_of(x) * 1000.0 / x["total_calls"] for x in rs]),
            "total_calls": rs[0]["total_calls"],
            "errors": sum(x["errors"] for x in rs),
        }
    for k in rounds:
        rr = [x for x in rows if x["round"] == k]
        cpu = sum(cpu_of(x) for x in rr)
        calls = sum(x["total_calls"] for x in rr)
        st = [x for x in lines if x.get("kind") == "go-start" and x.get("build") == build and x["round"] == k]
        idle = [x for x in lines if x.get("kind") == "go-idle" and x.get("build") == build and x["round"] == k]
        out["per_round"][k] = {
            "mix_cpu_ms": cpu, "mix_calls": calls,
            **{label: x["calls_per_s"] for x in rr for label in [x["label"]]},
            "go-seq-p50": next((x["p50_us"] for x in rr if x["label"] == "go-seq"), None),
            "start_ms": median([x["pipes_ms"] for x in st]),
            "start_cpu_ms": median([x["cpu_ms"] for x in st]),
            "idle_rss_kb": idle[0]["rss_kb"] if idle else None,
        }
    pr = out["per_round"].values()
    out["mix_cpu_ms"] = median([r["mix_cpu_ms"] for r in pr])
    out["mix_calls"] = next(iter(pr))["mix_calls"]
    out["cpu_us_per_call"] = out["mix_cpu_ms"] * 1000.0 / out["mix_calls"]
    starts = [x for x in lines if x.get("kind") == "go-start" and x.get("build") == build]
    out["start_ms"] = [x["pipes_ms"] for x in starts]
    out["start_cpu_ms"] = [x["cpu_ms"] for x in starts]
    out["start_ms_median"] = median(out["start_ms"])
    out["start_cpu_ms_median"] = median(out["start_cpu_ms"])
    idle = [x["rss_kb"] for x in lines if x.get("kind") == "go-idle" and x.get("build") == build]
    out["idle_rss_kb"] = median(idle)
    tr = [x for x in lines if x.get("kind") == "trace-result" and x.get("build") == build]
    out["trace"] = tr[-1] if tr else None
    return out


# (key, label, unit, better when lower)
GO_TABLE = [
    ("mix_cpu", "server CPU for the same mix of calls", "ms", True),
    ("cpu_per_call", "server CPU per call (that mix)", "us", True),
    ("req_per_call", "wineserver requests per call, server threads (traced pass)", "", True),
    ("seq_p50", "sequential PathExists p50, end to end", "us", True),
    ("conc8", "8 calls at once on 1 connection", "calls/s", False),
    ("clients8", "8 clients on 8 connections", "calls/s", False),
    ("churn", "connect + first call + close", "calls/s", False),
    ("start", "start to all 23 pipes listening", "ms", True),
    ("start_cpu", "server CPU until all 23 pipes listen", "ms", True),
    ("idle_rss", "idle RSS", "MiB", True),
    ("exe", "exe size", "MB", True),
]


def go_values(g, exe_bytes):
    if g is None:
        return {}
    r = g["rows"]
    tr = g.get("trace") or {}
    return {
        "mix_cpu": g["mix_cpu_ms"],
        "cpu_per_call": g["cpu_us_per_call"],
        "req_per_call": tr.get("per_call_mix"),
        "seq_p50": r.get("go-seq", {}).get("p50_us"),
        "conc8": r.get("go-conc8", {}).get("calls_per_s"),
        "clients8": r.get("go-clients8", {}).get("calls_per_s"),
        "churn": r.get("go-churn", {}).get("calls_per_s"),
        "start": g["start_ms_median"],
        "start_cpu": g["start_cpu_ms_median"],
        "idle_rss": g["idle_rss_kb"] / 1024.0 if g["idle_rss_kb"] else None,
        "exe": exe_bytes / 1e6 if exe_bytes else None,
    }


def pair_ratios(ours, base):
    """Median over the rounds (alternating pairs) of ours/base, per row that
    is measured in every round."""
    keys = {"mix_cpu": "mix_cpu_ms", "seq_p50": "go-seq-p50", "conc8": "go-conc8",
            "clients8": "go-clients8", "churn": "go-churn", "start": "start_ms",
            "start_cpu": "start_cpu_ms", "idle_rss": "idle_rss_kb"}
    out = {}
    for k, f in keys.items():
        rs = []
        for rnd, o in ours["per_round"].items():
            b = base["per_round"].get(rnd)
            if b and o.get(f) is not None and b.get(f):
                rs.append(o[f] / b[f])
        out[k] = median(rs) if rs else None
    out["cpu_per_call"] = out["mix_cpu"]
    return out


def go_report(lines, floor):
    ours_exe = (one(lines, "kind", "exe") or {}).get("bytes")
    base_fact = one(lines, "kind", "base")
    ours = go_build(lines, "ours")
    if ours is None:
        return None
    base = go_build(lines, "base") if base_fact else None
    vo = go_values(ours, ours_exe)
    vb = go_values(base, base_fact["bytes"]) if base else {}
    pr = pair_ratios(ours, base) if base else {}
    table = []
    for key, label, unit, lower in GO_TABLE:
        row = {"row": key, "label": label, "unit": unit, "lower_is_better": lower, "ours": vo.get(key)}
        if base:
            row["base"] = vb.get(key)
            row["ours_over_base"] = pr.get(key) if pr.get(key) is not None else ratio(vo.get(key), vb.get(key))
        table.append(row)
    res = {"ours_commit": (one(lines, "kind", "ours") or {}).get("commit"),
           "base_commit": base_fact["commit"] if base_fact else None,
           "rounds": ours["rounds"], "table": table, "ours": ours, "base": base}
    if floor:
        res["seq_p50_vs_floor"] = ratio(vo.get("seq_p50"), floor["p50_us"])
    return res


def fmt(v, unit):
    if v is None:
        return "-"
    if unit in ("MiB", "MB"):
        return f"{v:.2f}"
    if unit == "" or (unit == "ms" and v < 100):
        return f"{v:.1f}"
    return f"{v:.0f}"


def print_go(go, floor, mem):
    base = go["base_commit"]
    print(f"real grpc-go client (Go 1.19, grpc-go 1.33; medians of {go['rounds']} rounds"
          + (f", alternating with base {base[:12]}; ratio = median of the per-round ours/base)" if base else ")"))
    mix = go["ours"]["mix_calls"]
    print(f"  mix: every row below once = {mix} PathExists calls (warm-up included) per round")
    hdr = f"  {'row':<58} {'unit':>7} {'ours':>9}" + (f" {'base':>9} {'ours/base':>9}" if base else "")
    print(hdr)
    print("  " + "-" * (len(hdr) - 2))
    for r in go["table"]:
        line = f"  {r['label']:<58} {r['unit']:>7} {fmt(r['ours'], r['unit']):>9}"
        if base:
            q = r.get("ours_over_base")
            line += f" {fmt(r.get('base'), r['unit']):>9} {('%.2f' % q) if q is not None else '-':>9}"
        print(line)
    if floor:
        print(f"  floor (raw pipe echo, same run): p50 {floor['p50_us']:.0f} us, {floor['calls_per_s']:.0f} calls/s; "
              f"sequential p50 of the real client = {go.get('seq_p50_vs_floor') or 0:.1f}x the floor")
    if mem.get("empty_cpu_ms") is not None:
        print(f"  (an empty Wine process has used {mem['empty_cpu_ms']:.0f} ms of CPU by the time it idles: "
              f"part of every start-up CPU figure; CPU rows are the server process only, not wineserver, "
              f"from the scheduler's ns counters of its threads, or clock ticks when a thread came or went)")
    for b in ("ours", "base"):
        g = go.get(b)
        if not g:
            continue
        tr = g.get("trace")
        if tr:
            mix = set(tr.get("mix_rows", [r["label"] for r in tr["rows"]]))
            rows = ", ".join(f"{r['label']} {r['per_call']}" + ("" if r["label"] in mix else " (not in the mix)")
                             for r in tr["rows"])
            top = ", ".join(f"{n} {v}" for n, v in (tr["rows"][0]["top"] if tr["rows"] else [])[:6])
            print(f"  {b}: wineserver requests per call {rows}; at start-up {tr['start_requests']}; "
                  f"idle {tr['idle_per_s']}/s; sequential call's top: {top}")
        print(f"  {b}: per row server CPU us/call " + ", ".join(
            f"{k} {v['server_cpu_us_per_call']:.0f}" for k, v in g["rows"].items())
            + f"; starts {', '.join('%.0f' % x for x in g['start_ms'])} ms")


def busy_note(env):
    try:
        load = float(str(env.get("load_before", "0")).split()[0])
    except ValueError:
        return None
    if load > 0.5 * (env.get("cpus") or 1):
        return (f"NOTE: the machine was busy before the run (1-min load average {load} on "
                f"{env.get('cpus')} CPUs): other work competed for the CPUs, so these figures "
                f"are pessimistic and noisier than on an idle machine.")
    return None


def bench(lines, out_path):
    env = one(lines, "kind", "env") or {}
    env.update(one(lines, "kind", "env-end") or {})
    exe = one(lines, "kind", "exe") or {}
    starts = [x["pipes_ms"] for x in pick(lines, "kind", "start") if x.get("pipes") == 23]
    spawn = [x["exit_ms"] for x in pick(lines, "kind", "spawn-exit")]
    mem = one(lines, "kind", "memory") or {}
    probe = one(lines, "name", "probe") or {}
    floor = one(lines, "name", "floor")
    floor_end = one(lines, "name", "floor-end")
    floor_hop = one(lines, "name", "floor-hop")
    host = [x for x in lines if str(x.get("name", "")).startswith("host-")]
    errors = 0

    rows = []
    for name, label in GRPC_ROWS:
        r = one(lines, "name", name)
        if r is None:
            continue
        errors += r["errors"]
        row = {k: r[k] for k in ("calls", "errors", "secs", "calls_per_s", "p50_us", "p99_us",
                                 "p999_us", "mean_us", "conns", "bdp_ping")}
        row["name"] = name
        row["label"] = label
        if floor:
            row["p50_vs_floor"] = round(r["p50_us"] / floor["p50_us"], 2)
            row["calls_per_s_vs_floor"] = round(r["calls_per_s"] / floor["calls_per_s"], 3)
        rows.append(row)

    checkpoints = pick(lines, "kind", "load-checkpoint")
    load = None
    if len(checkpoints) >= 2:
        load = load_verdict(checkpoints[0], checkpoints[-1])
        load["checkpoints"] = checkpoints

    seq = next((r for r in rows if r["name"] == "seq"), None)
    empty_kb = mem.get("empty_rss_kb")
    idle_kb = mem.get("idle_rss_kb")
    targets = []
    if seq and floor:
        targets.append({"target": "sequential p50 within 1.5x the floor",
                        "value": f"{seq['p50_vs_floor']:.2f}x",
                        "met": seq["p50_vs_floor"] <= 1.5})
    if empty_kb and idle_kb:
        d = (idle_kb - empty_kb) / 1024.0
        targets.append({"target": "idle memory within 4 MB of an empty Wine process",
                        "value": f"+{d:.1f} MiB", "met": d <= 4.0})
    if exe.get("bytes"):
        targets.append({"target": "executable under 2 MB",
                        "value": f"{exe['bytes'] / 1e6:.2f} MB", "met": exe["bytes"] < 2e6})
    if starts:
        targets.append({"target": "all 23 pipes within 100 ms of start",
                        "value": f"{median(starts):.0f} ms (median of {len(starts)})",
                        "met": median(starts) <= 100})

    result = {
        "date": env.get("date"),
        "host": {k: env.get(k) for k in ("cpus", "wine", "kernel", "load_before", "load_after")},
        "method": "Wine-side C clients against the real build/win/csi-proxy.exe in a private "
                  "Wine prefix; the floor (raw named-pipe echo of the same byte counts, "
                  "overlapped, one IOCP thread) is measured in the same run; "
                  "timed runs warm up 0.5 s and measure 5 s; latencies are per call, in us.",
        "bytes_per_call": probe,
        "floor": floor,
        "floor_end": floor_end,
        "floor_hop": floor_hop,
        "host_ops": host,
        "pathexists": rows,
        "memory_kib": mem,
        "exe": exe,
        "startup": {"pipes_ms": starts, "median_ms": median(starts),
                    "wine_empty_process_start_exit_ms": spawn,
                    "wine_empty_process_median_ms": median(spawn)},
        "load": load,
        "load_runs": pick(lines, "name", "load"),
        "targets": targets,
        "errors": errors,
    }
    go = go_report(lines, floor)
    if go:
        result["real_client"] = go
        errors += sum(v["errors"] for b in ("ours", "base") if go.get(b) for v in go[b]["rows"].values())
        result["errors"] = errors
    with open(out_path, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")

    print()
    print(f"csi-proxy bench, {env.get('date')}, {env.get('wine')}, {env.get('cpus')} CPUs "
          f"(load average before: {env.get('load_before')}, after: {env.get('load_after')})")
    busy = busy_note(env)
    if busy:
        print(busy)
    if probe:
        print(f"bytes per call: request {probe['req_bytes']} B (HEADERS+DATA as grpc-go sends "
              f"them once the HPACK table is warm; {probe['first_req_bytes']} B on a new "
              f"connection), response {probe['resp_bytes']} B (HEADERS+DATA+trailers); "
              f"control per call {probe['ctl_out_per_call']:.0f} B out (WINDOW_UPDATE+PING) / "
              f"{probe['ctl_in_per_call']:.0f} B in (PING ACK)")
    print()
    hdr = f"{'run':<52} {'calls/s':>8} {'p50 us':>8} {'p99 us':>8} {'p50/floor':>9} {'calls/s vs floor':>16}"
    print(hdr)
    print("-" * len(hdr))
    if floor:
        print(f"{'floor: raw pipe echo, %d B -> %d B' % (floor['req_bytes'], floor['resp_bytes']):<52} "
              f"{floor['calls_per_s']:>8.0f} {floor['p50_us']:>8.0f} {floor['p99_us']:>8.0f} "
              f"{1.0:>9.2f} {1.0:>16.2f}")
    for r in rows:
        print(f"{'PathExists ' + r['label']:<52} {r['calls_per_s']:>8.0f} {r['p50_us']:>8.0f} "
              f"{r['p99_us']:>8.0f} {r.get('p50_vs_floor', 0):>8.2f}x {r.get('calls_per_s_vs_floor', 0):>16.2f}")
    for extra, label in ((floor_hop, "floor + worker-pool hop (reference)"),
                         (floor_end, "floor again, after the gRPC runs")):
        if extra and floor:
            print(f"{label:<52} {extra['calls_per_s']:>8.0f} {extra['p50_us']:>8.0f} "
                  f"{extra['p99_us']:>8.0f} {extra['p50_us'] / floor['p50_us']:>8.2f}x "
                  f"{extra['calls_per_s'] / floor['calls_per_s']:>16.2f}")
    print()
    if host:
        print("host calls of one PathExists, in process (no pipe, no gRPC), p50 / p99 us:")
        for h in host:
            print(f"  {HOST_LABELS.get(h['name'], h['name']):<62} {h['p50_us']:>7.0f} {h['p99_us']:>7.0f}")
        print()
    if mem:
        print(f"memory (VmRSS of the Linux process hosting the exe): csi-proxy idle "
              f"{mem.get('idle_rss_kb')} KiB, empty Wine process {mem.get('empty_rss_kb')} KiB "
              f"(+{(mem.get('idle_rss_kb', 0) - mem.get('empty_rss_kb', 0)) / 1024:.1f} MiB); "
              f"peak (VmHWM) {mem.get('peak_hwm_kb')} KiB after the timed runs, "
              f"{mem.get('peak_hwm_after_load_kb')} KiB after the load check")
    if exe:
        print(f"executable: {exe.get('bytes')} bytes ({exe['bytes'] / 1e6:.2f} MB)")
    if starts:
        print(f"start to all 23 pipes listening: median {median(starts):.1f} ms over "
              f"{len(starts)} starts ({', '.join('%.0f' % s for s in starts)}); an empty exe "
              f"takes {median(spawn) or 0:.0f} ms from CreateProcess to exit under this Wine")
    print()
    if load:
        print_load("load check (scaled down: make load-wine compares 100k with 1M calls):",
                   checkpoints, load, pick(lines, "name", "load"))
        print()
    if go:
        print_go(go, floor, mem)
        print()
    print("targets (reported, not asserted):")
    for t in targets:
        print(f"  {'met   ' if t['met'] else 'MISSED'} {t['target']}: {t['value']}")
    if errors:
        print(f"\n{errors} calls FAILED during the timed runs")
    print(f"\nwritten to {out_path}")
    return 0 if errors == 0 else 1


def load_report(lines, out_path):
    checkpoints = pick(lines, "kind", "load-checkpoint")
    runs = pick(lines, "name", "load")
    env = one(lines, "kind", "env") or {}
    env.update(one(lines, "kind", "env-end") or {})
    if len(checkpoints) < 2:
        print("load: fewer than two checkpoints measured")
        return 1
    v = load_verdict(checkpoints[0], checkpoints[-1])
    v["checkpoints"] = checkpoints
    v["runs"] = runs
    v["date"] = env.get("date")
    v["host"] = {k: env.get(k) for k in ("cpus", "wine", "kernel", "load_before", "load_after")}
    with open(out_path, "w") as f:
        json.dump(v, f, indent=2)
        f.write("\n")
    print()
    print_load(f"Wine load, {env.get('date')}, {env.get('wine')}, {env.get('cpus')} CPUs "
               f"(load average before {env.get('load_before')}, after {env.get('load_after')}):",
               checkpoints, v, runs)
    failed = sum(r["errors"] for r in runs)
    print(f"\nwritten to {out_path}")
    return 0 if v["flat"] and failed == 0 else 1


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("bench", "load"):
        print(__doc__)
        return 2
    lines = load_lines(sys.argv[2])
    if sys.argv[1] == "bench":
        return bench(lines, sys.argv[3])
    return load_report(lines, sys.argv[3])


if __name__ == "__main__":
    sys.exit(main())
