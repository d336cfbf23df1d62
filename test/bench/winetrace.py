"""winetrace.py - the lines of a wineserver +server trace (wineserver -d1: its
stderr), each with the process of the thread that made it.

Every line is led by the Windows thread id of the caller. Threads are mapped
to processes from the trace itself: init_first_thread's reply names the new
thread's process (pid=, tid=), and a new_thread request on the current process
(process=ffffffff) makes a thread of the caller's process (the reply's tid=).
Thread ids are reused, so the mapping is updated in trace order.
Used by srvtrace.py (make bench) and startup.sh.
"""
import re

LINE = re.compile(r"^([0-9a-f]{4,8}): (\w+)\((.*)$")


def lines(path):
    """Yields (tid, name, rest, reply, pid) in trace order: rest is the text
    after the opening parenthesis, reply whether it is a reply line, pid the
    caller's process id (hex, as tid) or None when not known."""
    owner = {}    # tid -> pid
    pending = {}  # tid -> process= of its last new_thread request
    with open(path, errors="replace") as f:
        for raw in f:
            m = LINE.match(raw)
            if not m:
                continue
            tid, name, rest = m.groups()
            reply = rest.startswith(") = ")
            if name == "new_thread":
                if not reply:
                    p = re.search(r"process=([0-9a-f]+)", rest)
                    pending[tid] = p.group(1) if p else None
                else:
                    t = re.search(r"tid=([0-9a-f]+)", rest)
                    if t:
                        owner[t.group(1)] = owner.get(tid) if pending.get(tid) == "ffffffff" else None
            elif name == "init_first_thread" and reply:
                p = re.search(r"pid=([0-9a-f]+), tid=([0-9a-f]+)", rest)
                if p:
                    owner[p.group(2)] = p.group(1)
            yield tid, name, rest, reply, owner.get(tid)
