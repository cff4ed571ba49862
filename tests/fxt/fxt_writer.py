#!/usr/bin/env python3
"""A small FXT writer for what the corpus lacks: big-endian traces, log
records, legacy context switches, every argument type, string and thread
table reuse, 32000-byte strings, unknown records.  Written from the spec
(specs/fuchsia-trace-format.md + fxt-notes.md), independently of the C
decoder, with the text lines tracefs must show for each record.

usage: fxt_writer.py DIR   -> DIR/synthetic-le.fxt, DIR/synthetic-be.fxt and
                              DIR/synthetic.expected/<file> for each checked file
"""
import os
import struct
import sys

INLINE = None  # marker for inline string refs


def pad(b):
    return b + b"\0" * (-len(b) % 8)


class Writer:
    def __init__(self, big_endian):
        self.fmt = ">Q" if big_endian else "<Q"
        self.out = bytearray()

    def word(self, v):
        return struct.pack(self.fmt, v & 0xFFFFFFFFFFFFFFFF)

    def record(self, rtype, fields, body):
        assert len(body) % 8 == 0
        size = 1 + len(body) // 8
        assert size < 4096, size
        self.out += self.word(rtype | size << 4 | fields << 16) + body

    # string refs: an int index, or a str written inline
    def sref(self, s):
        if isinstance(s, int):
            return s, b""
        data = s.encode()
        return (0x8000 | len(data)) if data else 0, pad(data)

    def magic(self):
        self.out += self.word(0x0016547846040010)

    def provider_info(self, pid, name):
        n = name.encode()
        self.record(0, 1 | pid << 4 | len(n) << 36, pad(n))

    def provider_section(self, pid):
        self.record(0, 2 | pid << 4, b"")

    def init(self, ticks_per_second, extra_words=0):
        self.record(1, 0, self.word(ticks_per_second) + b"\0" * 8 * extra_words)

    def string(self, index, s):
        data = s.encode()
        self.record(2, index | len(data) << 16, pad(data))

    def thread(self, index, pid, tid):
        self.record(3, index, self.word(pid) + self.word(tid))

    def args(self, args):
        out = b""
        for a in args:
            kind, name = a[0], a[1]
            nref, nbody = self.sref(name)
            val_hi, tail = 0, b""
            if kind == 1:
                val_hi = a[2] & 0xFFFFFFFF
            elif kind == 2:
                val_hi = a[2]
            elif kind in (3, 4, 7, 8):
                tail = self.word(a[2])
            elif kind == 5:
                tail = struct.pack(self.fmt[0] + "d", a[2])
            elif kind == 6:
                vref, vbody = self.sref(a[2])
                val_hi, tail = vref, vbody
            elif kind == 9:
                val_hi = 1 if a[2] else 0
            elif kind >= 10:   # unknown type: opaque payload words
                tail = b"\x5a" * 16
            body = nbody + tail
            size = 1 + len(body) // 8
            out += self.word(kind | size << 4 | nref << 16 | val_hi << 32) + body
        return out

    def event(self, etype, ts, thread, cat, name, args=(), extra=None):
        tref, tbody = (thread, b"") if isinstance(thread, int) else (0, self.word(thread[0]) + self.word(thread[1]))
        cref, cbody = self.sref(cat)
        nref, nbody = self.sref(name)
        body = self.word(ts) + tbody + cbody + nbody + self.args(args)
        if extra is not None:
            body += self.word(extra)
        self.record(4, etype | len(args) << 4 | tref << 8 | cref << 16 | nref << 32, body)

    def blob(self, name, payload, btype=1):
        nref, nbody = self.sref(name)
        self.record(5, nref | len(payload) << 16 | btype << 32, nbody + pad(payload))

    def uobject(self, pointer, pid, name, args=()):
        nref, nbody = self.sref(name)
        self.record(6, nref << 8 | len(args) << 24, self.word(pointer) + self.word(pid) + nbody + self.args(args))

    def kobject(self, otype, koid, name, args=()):
        nref, nbody = self.sref(name)
        self.record(7, otype | nref << 8 | len(args) << 24, self.word(koid) + nbody + self.args(args))

    def legacy_switch(self, cpu, ts, state, out_thread, in_thread, out_prio, in_prio):
        body = self.word(ts)
        refs = []
        for t in (out_thread, in_thread):
            if isinstance(t, int):
                refs.append(t)
            else:
                refs.append(0)
                body += self.word(t[0]) + self.word(t[1])
        self.record(8, cpu | state << 8 | refs[0] << 12 | refs[1] << 20 | out_prio << 28 | in_prio << 36, body)

    def switch(self, cpu, ts, state, out_tid, in_tid, args=()):
        self.record(8, len(args) | cpu << 4 | state << 20 | 1 << 44,
                    self.word(ts) + self.word(out_tid) + self.word(in_tid) + self.args(args))

    def wakeup(self, cpu, ts, tid, args=()):
        self.record(8, len(args) | cpu << 4 | 2 << 44, self.word(ts) + self.word(tid) + self.args(args))

    def log(self, ts, thread, message):
        data = message.encode()
        tref, tbody = (thread, b"") if isinstance(thread, int) else (0, self.word(thread[0]) + self.word(thread[1]))
        self.record(9, len(data) | tref << 16, self.word(ts) + tbody + pad(data))

    def unknown(self, rtype, words):
        self.record(rtype, 0, b"\0" * 8 * words)


def esc(s, also=""):
    out = ""
    for ch in s.encode():
        c = chr(ch)
        if ch <= 0x20 or ch == 0x7F or c in '\\"' + also:
            out += "\\x%02x" % ch
        else:
            out += c
    return out or '""'


def build(w):
    """Writes the trace; returns the expected text of the checked files."""
    exp = {"events": [], "logs": [], "cpus/2/switches": [], "cpus/3/switches": [], "blobs/b1": b"",
           "threads/11/spans": [], "counters/level.9.csv": ["ts_ns,value,extra"]}
    big = "x" * 32000
    w.magic()
    w.provider_info(5, "synth")
    w.init(1000000)                 # 1 tick = 1 us
    w.string(1, "cat")
    w.string(2, "name-a")
    w.string(3, big)
    w.string(4, "k")
    w.thread(1, 10, 11)
    all_args = [(0, "n"), (1, "i32", -5), (2, "u32", 4000000000), (3, "i64", -(1 << 40)),
                (4, "u64", (1 << 63) + 5), (5, "dbl", 1.5), (6, "s_inline", "two words"),
                (6, "s_indexed", 2), (6, "s_empty", ""), (7, "ptr", 0xdeadbeef), (8, "koid", 42),
                (9, "yes", True), (9, "no", False), (12, "future"), (4, 4, 7)]
    w.event(0, 1, 1, 1, 2, all_args)
    exp["events"].append("1000 10/11 instant cat:name-a - n i32=-5 u32=4000000000 i64=-1099511627776 "
                         "u64=9223372036854775813 dbl=1.5 s_inline=two\\x20words s_indexed=name-a "
                         's_empty="" ptr=0xdeadbeef koid=42 yes=true no=false future=?type12 k=7')
    # Spans on thread 10/11: A [100,500] > B [200,300], C complete [400,450], D never ends.
    for ts, et, name, extra in ((100, 2, "A", None), (200, 2, "B", None), (300, 3, "B", None),
                                (400, 4, "C", 450), (500, 3, "A", None), (600, 2, "D", None)):
        w.event(et, ts, 1, "c", name, (), extra)
        kind = {2: "dur_begin", 3: "dur_end", 4: "dur_complete"}[et]
        tail = " dur=50000" if et == 4 else " -"
        exp["events"].append("%d 10/11 %s c:%s%s" % (ts * 1000, kind, name, tail))
    exp["threads/11/spans"] = ["100000 400000 0 c:A", "200000 100000 1 c:B", "400000 50000 1 c:C",
                               "600000 - 0 c:D"]
    # Table reuse: string 2 and thread 1 registered again.
    w.string(2, "name-b")
    w.thread(1, 10, 12)
    w.event(0, 700, 1, 1, 2)
    exp["events"].append("700000 10/12 instant cat:name-b -")
    # 32000-byte strings: indexed name and an inline argument value.
    w.event(0, 701, (10, 11), 1, 3, [(6, "v", big)])
    exp["events"].append("701000 10/11 instant cat:%s - v=%s" % (big, big))
    # Other event types with their ids.
    for et, kind in ((1, "counter"), (5, "async_begin"), (6, "async_instant"), (7, "async_end"),
                     (8, "flow_begin"), (9, "flow_step"), (10, "flow_end")):
        args = [(1, "value", 3), (6, "extra", "e,1")] if et == 1 else []
        w.event(et, 800 + et, (10, 11), "k:x", "level" if et == 1 else "op", args, 9)
        line = "%d 10/11 %s k\\x3ax:%s id=9" % ((800 + et) * 1000, kind, "level" if et == 1 else "op")
        exp["events"].append(line + (' value=3 extra=e,1' if et == 1 else ""))
    exp["counters/level.9.csv"].append('801000,3,"e,1"')
    # Logs, inline and indexed threads.
    w.log(900, (10, 13), "hello log world")
    w.log(901, 1, "tab\there")
    exp["logs"] += ["900000 10/13 hello log world", "901000 10/12 tab\\x09here"]
    # Scheduling: legacy layout, newer layout, wakeup.
    w.legacy_switch(2, 1000, 3, 1, (20, 21), 4, 5)
    exp["cpus/2/switches"].append("1000000 switch cpu=2 out=12 out_state=blocked in=21 out_pid=10 in_pid=20 "
                                  "out_prio=4 in_prio=5")
    w.switch(3, 1001, 2, 12, 21, [(1, "incoming_weight", 2)])
    w.wakeup(3, 1002, 12)
    exp["cpus/3/switches"] += ["1001000 switch cpu=3 out=12 out_state=suspended in=21 incoming_weight=2",
                               "1002000 wakeup cpu=3 tid=12"]
    # Unknown record types and scheduling sub-types are skipped by size.
    w.unknown(11, 2)
    w.record(8, 3 << 44, b"\0" * 16)
    w.record(4, 12 | 1 << 8 | 1 << 16 | 1 << 32, w.word(5))   # event type 12: newer than the spec
    # Objects and blobs.
    w.kobject(1, 10, "proc-ten")
    w.kobject(2, 11, "thread-eleven", [(8, "process", 10)])
    w.uobject(0x1000, 10, "widget", [(6, "kind", "round")])
    w.blob("b1", b"hello ")
    w.blob("b1", b"blob world!")
    exp["blobs/b1"] = b"hello blob world!"
    # A second provider with its own tables, then back to the first.
    w.provider_info(6, "other")
    w.string(1, "other-cat")
    w.init(2000000000)              # 2 ticks per ns
    w.event(0, 4000, (30, 31), 1, "x")
    exp["events"].append("2000 30/31 instant other-cat:x -")
    w.provider_section(5)
    w.event(0, 2000, (10, 11), 1, "back")
    exp["events"].append("2000000 10/11 instant cat:back -")
    exp["providers/5-synth/events"] = [l for l in exp["events"] if not l.startswith("2000 30/31")]
    exp["providers/6-other/events"] = ["2000 30/31 instant other-cat:x -"]
    return exp


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "synthetic.expected"), exist_ok=True)
    for name, big in (("synthetic-le.fxt", False), ("synthetic-be.fxt", True)):
        w = Writer(big)
        exp = build(w)
        with open(os.path.join(out, name), "wb") as f:
            f.write(w.out)
    for path, content in exp.items():
        dest = os.path.join(out, "synthetic.expected", path.replace("/", "%"))
        data = content if isinstance(content, bytes) else "".join(l + "\n" for l in content).encode()
        with open(dest, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
