#!/usr/bin/env python3
"""Writes an FXT trace whose providers are named with NULs and a newline:
5 "ab\\0cd", 6 "ab\\0ce", 7 "two\\nlines" and 8 "ab", one instant event in
each provider's section.  A name cut at its NUL would make providers/
show 5-ab and 6-ab; the tree must show every name whole and escaped.
usage: make_names.py OUT"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fxt_writer  # noqa: E402

PROVIDERS = [(5, "ab\0cd"), (6, "ab\0ce"), (7, "two\nlines"), (8, "ab")]


def main():
    w = fxt_writer.Writer(False)
    w.magic()
    w.init(1000000)
    for pid, name in PROVIDERS:
        w.provider_info(pid, name)
    for n, (pid, _) in enumerate(PROVIDERS):
        w.provider_section(pid)
        w.init(1000000)
        w.string(1, "cat")
        w.thread(1, 10, 11)
        w.event(0, 100 * (n + 1), 1, 1, f"event{pid}")
    with open(sys.argv[1], "wb") as f:
        f.write(w.out)


if __name__ == "__main__":
    main()
