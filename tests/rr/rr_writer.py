"""Test helper: writes small rr trace directories (TRACE_VERSION 85) from
scratch: frames with registers and memory writes, the data stream, mmaps
and task events, each a single-segment Cap'n Proto message laid out as
rr-layout.txt (../shared/specs) gives, packed and cut into rr's brotli
blocks by tests/rr/rr_blocks.  The `version` file (the Header) is copied."""
import os
import struct
import subprocess

from rr_frames import pack_message

ARCH_X86, ARCH_X8664, ARCH_AARCH64 = 0, 1, 2
EV_SYSCALL = 11
ENTERING, EXITING = 1, 2
SOURCE_ZERO, SOURCE_TRACE = 0, 1
TASK_CLONE, TASK_EXEC, TASK_EXIT, TASK_DETACH = 0, 1, 2, 3
CLONE_THREAD = 0x00010000


def entering_regs(number):
    """x86-64 registers of a syscall entry as rr records them: rax -ENOSYS,
    orig_rax the number, rip, cs and ss set."""
    r = [0] * 27
    r[10], r[15], r[16], r[17], r[20] = (-38) & (1 << 64) - 1, number, 0x401000, 0x33, 0x2B
    return struct.pack("<27Q", *r)


class Message:
    """One segment of words; word 0 is the root pointer."""

    def __init__(self):
        self.buf = bytearray(8)

    def alloc(self, words):
        at = len(self.buf) // 8
        self.buf += bytes(8 * words)
        return at

    def pointer(self, at, target, kind, upper):
        offset = (target - at - 1) & 0x3FFFFFFF
        struct.pack_into("<Q", self.buf, 8 * at, (offset << 2) | kind | (upper << 32))

    def new_struct(self, at, data, ptrs):
        """A struct pointed to from word `at`; returns its first word."""
        start = self.alloc(data + ptrs)
        self.pointer(at, start, 0, data | (ptrs << 16))
        return start

    def put(self, word, byte, fmt, value):
        struct.pack_into(fmt, self.buf, 8 * word + byte, value)

    def data(self, at, raw):
        start = self.alloc((len(raw) + 7) // 8)
        self.buf[8 * start:8 * start + len(raw)] = raw
        self.pointer(at, start, 1, 2 | (len(raw) << 3))

    def struct_list(self, at, count, data, ptrs):
        """A composite list; returns each element's first word."""
        size = data + ptrs
        tag = self.alloc(1 + count * size)
        self.pointer(at, tag, 1, 7 | ((count * size) << 3))
        struct.pack_into("<Q", self.buf, 8 * tag, (count << 2) | (data << 32) | (ptrs << 48))
        return [tag + 1 + i * size for i in range(count)]

    def data_list(self, at, items):
        start = self.alloc(len(items))
        self.pointer(at, start, 1, 6 | (len(items) << 3))
        for i, raw in enumerate(items):
            self.data(start + i, raw)

    def packed(self):
        return pack_message([bytes(self.buf[i:i + 8]) for i in range(0, len(self.buf), 8)])


def stored(image, holes):
    """The bytes rr stores in `data` for a write: the image without its holes."""
    out, at = bytearray(), 0
    for offset, size in holes:
        assert image[offset:offset + size] == bytes(size), "a hole must be zeros"
        out += image[at:offset]
        at = offset + size
    return bytes(out + image[at:])


class Trace:
    def __init__(self):
        self.frames, self.mmaps, self.tasks = [], [], []
        self.data = bytearray()

    def next_time(self):
        return len(self.frames) + 1

    def syscall(self, tid, arch, sys_arch, number, state, regs, extra=b"", writes=()):
        """One SYSCALL frame; writes are (addr, image, holes, tid) with
        image the hole-filled bytes (None: a write of that many bytes' size
        with no image, e.g. (0, 4) at a null address).  Returns its time."""
        m = Message()
        root = m.new_struct(0, 7, 5)
        m.put(root, 0, "<i", tid)
        m.put(root, 4, "<H", arch)
        m.put(root, 6, "<H", EV_SYSCALL)
        m.put(root, 16, "<d", 1000.0 + len(self.frames) * 1e-5)
        m.put(root + 3, 0, "<H", sys_arch)
        m.put(root + 3, 2, "<H", state)
        m.put(root + 3, 4, "<i", number)
        if writes:
            for element, (addr, image, holes, wtid) in zip(m.struct_list(root + 7, len(writes), 3, 1), writes):
                m.put(element, 0, "<i", wtid)
                m.put(element, 8, "<Q", addr)
                m.put(element, 16, "<Q", len(image))
                if holes:
                    for h, (offset, size) in zip(m.struct_list(element + 3, len(holes), 2, 0), holes):
                        m.put(h, 0, "<Q", offset)
                        m.put(h, 8, "<Q", size)
                self.data += stored(image, holes)
        m.data(m.new_struct(root + 8, 0, 1), regs)
        if extra:
            m.data(m.new_struct(root + 9, 0, 1), extra)
        self.frames.append(m.packed())
        return len(self.frames)

    def mmap(self, time, start, end, fsname, prot, flags, source=SOURCE_TRACE):
        m = Message()
        root = m.new_struct(0, 11, 3)
        for byte, fmt, value in [(0, "<q", time), (8, "<Q", start), (16, "<Q", end), (40, "<i", prot),
                                 (44, "<i", flags), (68, "<H", source)]:
            m.put(root, byte, fmt, value)
        m.data(root + 11, fsname.encode())
        self.mmaps.append(m.packed())

    def exec_event(self, time, tid, file_name, argv, exe_base):
        m = Message()
        root = m.new_struct(0, 5, 4)
        m.put(root, 0, "<q", time)
        m.put(root, 8, "<i", tid)
        m.put(root, 16, "<Q", exe_base)
        m.put(root, 24, "<H", TASK_EXEC)
        m.data(root + 5, file_name.encode())
        m.data_list(root + 6, [a.encode() for a in argv])
        self.tasks.append(m.packed())

    def task_event(self, time, tid, kind, fields=()):
        """A clone, exit or detach task event; fields are (byte, format,
        value) in its data section."""
        m = Message()
        root = m.new_struct(0, 5, 4)
        for byte, fmt, value in [(0, "<q", time), (8, "<i", tid), (24, "<H", kind), *fields]:
            m.put(root, byte, fmt, value)
        self.tasks.append(m.packed())

    def clone_event(self, time, tid, parent, flags=0, own_ns_tid=None):
        self.task_event(time, tid, TASK_CLONE, [(12, "<i", parent), (16, "<i", flags),
                                                (20, "<i", tid if own_ns_tid is None else own_ns_tid)])

    def exit_event(self, time, tid, status):
        self.task_event(time, tid, TASK_EXIT, [(12, "<i", status)])

    def detach_event(self, time, tid):
        self.task_event(time, tid, TASK_DETACH)

    def write(self, path, version, blocks_tool, block_bytes=1 << 20):
        """block_bytes: the events' and data's blocks (rr writes 1 MiB)."""
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "version"), "wb") as f:
            f.write(version)
        streams = {"events": (b"".join(self.frames), block_bytes), "data": (bytes(self.data), block_bytes),
                   "mmaps": (b"".join(self.mmaps), 64 << 10), "tasks": (b"".join(self.tasks), 64 << 10)}
        for name, (raw, block) in streams.items():
            packed = subprocess.run([blocks_tool, "pack", str(block)], input=raw, stdout=subprocess.PIPE,
                                    check=True).stdout if raw else b""
            with open(os.path.join(path, name), "wb") as f:
                f.write(packed)
