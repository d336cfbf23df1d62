#!/usr/bin/env python3
"""Counts the wineserver requests the csi-proxy server's threads made, from a
+server trace (wineserver -d1: its stderr), per call of the real grpc-go
client: what Windows would see as system calls.

    srvtrace.py TRACE SERVER_WINPID BUILD < MARKS.jsonl   (one JSON line out)

The trace has every process's requests; winetrace.py tells which thread
belongs to which process.

The windows come from `bench-mon mark LABEL`, which opens the (absent) pipe
bench-mark-LABEL: the first trace line naming it starts window LABEL,
LABEL-end ends it. MARKS.jsonl (from scripts/bench.sh) has the wall-clock
time of each mark and the client's JSON line of each run (total_calls).
Windows: start..started (start-up), started..idle-end (idle: requests per
second at rest, taken off the call windows in proportion to their length),
and one per client run.

SRVTRACE_TID=1 also prints to stderr, per run and server thread, its requests
per call (which thread makes what: e.g. each write a worker makes comes with a
select, the wait Wine makes to hand the write's result back).
"""
import collections
import json
import re
import os
import sys

import winetrace

DEBUG_TID = os.environ.get("SRVTRACE_TID") == "1"
# The rows of per_call_mix, docs/performance.md's "wineserver requests per
# call (mix)", kept the same so that builds compare (100 sequential calls,
# 200 from 8 clients, 20 connect + call + close); any other traced row
# (go-conc8) gets its own per_call only.
MIX_ROWS = {"go-seq", "go-clients8", "go-churn"}

MARK = re.compile(r"bench-mark-([A-Za-z0-9_-]+?)\\?\"")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    trace, build = sys.argv[1], sys.argv[3]
    server = "%04x" % int(sys.argv[2])
    marks, runs = {}, {}
    for line in sys.stdin:
        line = line.strip()
        if not line.startswith("{"):
            continue
        x = json.loads(line)
        if x.get("kind") == "trace-mark":
            marks[x["label"]] = x["t"]
        elif x.get("trace_run"):
            runs[x["label"]] = x

    per_tid = collections.defaultdict(collections.Counter)
    order = []     # mark labels in trace order
    counts = collections.defaultdict(collections.Counter)  # window -> request name -> n
    current = None
    for tid, name, rest, reply, pid in winetrace.lines(trace):
        if not reply:
            mk = MARK.search(rest)
            if mk and mk.group(1) not in order:
                label = mk.group(1)
                order.append(label)
                current = None if label.endswith("-end") else label
                if label == "started":
                    current = "idle"
                elif label == "idle-end":
                    current = None
        if not reply and current and pid == server:
            counts[current][name] += 1
            if DEBUG_TID:
                per_tid[(current, tid)][name] += 1

    def span(a, b):
        return max(marks.get(b, 0) - marks.get(a, 0), 0.0)

    idle_secs = span("started", "idle-end")
    idle_n = sum(counts["idle"].values())
    idle_rate = idle_n / idle_secs if idle_secs > 0 else 0.0
    rows = []
    tot_req = tot_calls = 0.0
    for label, run in runs.items():
        n = sum(counts[label].values())
        secs = span(label, label + "-end")
        net = max(n - idle_rate * secs, 0.0)
        calls = run["total_calls"]
        rows.append({"label": label, "calls": calls, "requests": n, "window_secs": round(secs, 3),
                     "idle_share": round(idle_rate * secs, 1), "per_call": round(net / calls, 2),
                     "top": [[k, round(v / calls, 2)] for k, v in counts[label].most_common(16)]})
        if label in MIX_ROWS:
            tot_req += net
            tot_calls += calls
    out = {"kind": "trace-result", "build": build, "server_pid": server,
           "marks_seen": order, "start_requests": sum(counts["start"].values()),
           "start_top": counts["start"].most_common(8),
           "idle_requests": idle_n, "idle_secs": round(idle_secs, 3),
           "idle_per_s": round(idle_rate, 2), "rows": rows,
           "mix_rows": sorted(MIX_ROWS),
           "per_call_mix": round(tot_req / tot_calls, 2) if tot_calls else None}
    print(json.dumps(out, separators=(",", ":")))
    if DEBUG_TID:
        for (w, t), c in sorted(per_tid.items()):
            if w in runs:
                n = runs[w]["total_calls"]
                print(w, t, [[k, round(v / n, 2)] for k, v in c.most_common(10)], file=sys.stderr)
    missing = [x for x in ["start", "started", "idle-end"] + [r for r in runs] if x not in order]
    if missing:
        print(f"srvtrace: marks not found in the trace: {missing}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
