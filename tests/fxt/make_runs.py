#!/usr/bin/env python3
"""make_runs.py OUT [THREADS [EVENTS [phases]]]: an FXT trace of THREADS
threads (default 3) taking turns in stretches of about 8 KiB of events (so
each stretch is a run of its thread: the common files are cut at run
starts), or with `phases` one thread's stretches after another's (each
thread has events in its part of the trace only),
EVENTS events (default 32,000): nested duration begins and ends, instants,
counters, an end that closes nothing, logs between.  With one thread, its
events are one stretch after another with no gap, cut only where a run
reaches its most events."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fxt_writer import Writer  # noqa: E402

INSTANT, COUNTER, BEGIN, END = 0, 1, 2, 3


def main():
    w = Writer(False)
    w.magic()
    w.provider_info(7, "runs")
    w.init(1000000000)
    w.string(1, "cat")
    w.string(2, "outer")
    w.string(3, "inner")
    w.string(4, "tick")
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    wanted = int(sys.argv[3]) if len(sys.argv) > 3 else 32000
    phases = len(sys.argv) > 4 and sys.argv[4] == "phases"
    for t in range(threads):
        w.thread(t + 1, 100, 200 + t)
    ts = 0
    events = 0
    stretch = 0
    while events < wanted:
        if phases:
            thread = min(threads - 1, events * threads // wanted) + 1
        else:
            thread = stretch % threads + 1
        if stretch == 5:
            w.event(END, ts, thread, 1, 3)       # closes nothing
            events += 1
        for i in range(40):
            ts += 10
            w.event(BEGIN, ts, thread, 1, 2, [(2, "i", i)])
            w.event(BEGIN, ts + 1, thread, 1, 3)
            w.event(INSTANT, ts + 2, thread, 1, 4, [(6, "s", "x" * (i % 9))])
            w.event(END, ts + 3, thread, 1, 3)
            w.event(END, ts + 4, thread, 1, 2)
            if i % 8 == 0:
                w.event(COUNTER, ts + 5, thread, 1, 4, [(2, "v", i)], extra=1)
                events += 1
            events += 5
        w.log(ts, thread, "stretch %d" % stretch)
        stretch += 1
    with open(sys.argv[1], "wb") as f:
        f.write(w.out)


if __name__ == "__main__":
    main()
