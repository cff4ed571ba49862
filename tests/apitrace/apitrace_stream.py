"""The two encodings every apitrace stream writer of the tests needs:
apitrace's variable-length unsigned integer, and a length-prefixed string
(bytes as they are, str as UTF-8)."""


def uint(v):
    out = bytearray()
    while True:
        b, v = v & 0x7f, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def string(s):
    b = s.encode() if isinstance(s, str) else s
    return uint(len(b)) + b
