"""Test helper: the frames of an rr events stream as Cap'n Proto words, to
read and patch fields and pack them again (rr writes each frame as one
packed message)."""
import struct


def unpack_words(raw, pos, count):
    """`count` words unpacked from raw[pos:]; returns (words, new pos)."""
    words = []
    while len(words) < count:
        tag = raw[pos]
        pos += 1
        word = bytearray(8)
        for bit in range(8):
            if tag & (1 << bit):
                word[bit] = raw[pos]
                pos += 1
        words.append(bytes(word))
        if tag in (0, 0xFF):
            run = raw[pos]
            pos += 1
            if tag == 0:
                words += [bytes(8)] * run
            else:
                words += [raw[pos + 8 * i:pos + 8 * i + 8] for i in range(run)]
                pos += 8 * run
    assert len(words) == count, "a run crosses a message"
    return words, pos


def read_messages(raw):
    """Each frame as its list of segments, each a list of words."""
    pos, frames = 0, []
    while pos < len(raw):
        first, pos = unpack_words(raw, pos, 1)
        count, size0 = struct.unpack("<II", first[0])
        table_words = (count + 1) // 2  # the rest of the segment table, padded
        table, pos = unpack_words(raw, pos, table_words)
        sizes = [size0] + list(struct.unpack("<%dI" % count, b"".join(table)[:4 * count]))
        segments = []
        for size in sizes:
            words, pos = unpack_words(raw, pos, size)
            segments.append(words)
        frames.append(segments)
    return frames


def pack_message(words):
    """One single-segment message."""
    out = bytearray()
    for w in [struct.pack("<II", 0, len(words))] + words:
        tag = sum(1 << i for i in range(8) if w[i])
        out.append(tag)
        out += bytes(b for b in w if b)
        if tag in (0, 0xFF):
            out.append(0)
    return bytes(out)


def word(segments, seg, at):
    return struct.unpack("<Q", segments[seg][at])[0]


def follow(segments, seg, at):
    """(segment, target word, pointer) of the struct or list pointer in word
    `at` of segment `seg`, through far pointers."""
    ptr = word(segments, seg, at)
    if ptr & 3 == 2:
        pad_seg, pad = ptr >> 32, (ptr >> 3) & 0x1FFFFFFF
        if not ptr & 4:
            return follow(segments, pad_seg, pad)
        content = word(segments, pad_seg, pad)
        return content >> 32, (content >> 3) & 0x1FFFFFFF, word(segments, pad_seg, pad + 1)
    offset = (ptr >> 2) & 0x3FFFFFFF
    if offset & 0x20000000:
        offset -= 0x40000000
    return seg, at + 1 + offset, ptr


def root(segments):
    """(segment, first data word, data words, pointer words) of the root struct."""
    seg, start, ptr = follow(segments, 0, 0)
    return seg, start, (ptr >> 32) & 0xFFFF, ptr >> 48


def data_at(segments, seg, at):
    """(segment, first word, byte count) of the Data (byte list) pointer in
    word `at`; (seg, None, 0) for a null pointer."""
    if word(segments, seg, at) == 0:
        return seg, None, 0
    seg, start, ptr = follow(segments, seg, at)
    assert ptr & 3 == 1 and (ptr >> 32) & 7 == 2, "not a byte list"
    return seg, start, ptr >> 35


def data_bytes(segments, seg, at):
    seg, start, size = data_at(segments, seg, at)
    return b"".join(segments[seg][start:start + (size + 7) // 8])[:size] if start is not None else b""


def put(words, at, byte, fmt, value):
    w = bytearray(words[at])
    struct.pack_into(fmt, w, byte, value)
    words[at] = bytes(w)


def field(words, at, byte, fmt):
    return struct.unpack_from(fmt, words[at], byte)[0]
