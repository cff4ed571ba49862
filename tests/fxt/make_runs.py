#!/usr/bin/env python3
"""make_runs.py OUT: an FXT trace of 3 threads taking turns in stretches of
about 8 KiB of events (so each stretch is a run of its thread: the common
files are cut at run starts), 32,000 events: nested duration begins and
ends, instants, counters, an end that closes nothing, logs between."""
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
    for t in range(3):
        w.thread(t + 1, 100, 200 + t)
    ts = 0
    events = 0
    stretch = 0
    while events < 32000:
        thread = stretch % 3 + 1
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
