#!/usr/bin/env python3
"""Writes one apitrace container whose single compressed stream decodes to
SIZE bytes: the raw call stream read from stdin, padded with zero bytes
(calls entered and never left) up to SIZE.  Compressed by the libraries
tracefs links (ctypes), so a few KB of file hold 64 MiB of stream.
usage: make_big_stream.py brotli|zstd SIZE WINDOW_LOG OUT < raw-stream
  brotli: one stream with lgwin WINDOW_LOG (10..24)
  zstd:   one frame with windowLog WINDOW_LOG (content size in its header)"""
import ctypes
import sys

kind, size, window_log, out_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
raw = sys.stdin.buffer.read()
data = raw + bytes(max(0, size - len(raw)))

if kind == "brotli":
    enc = ctypes.CDLL("libbrotlienc.so.1")
    enc.BrotliEncoderMaxCompressedSize.restype = ctypes.c_size_t
    enc.BrotliEncoderMaxCompressedSize.argtypes = [ctypes.c_size_t]
    capacity = enc.BrotliEncoderMaxCompressedSize(len(data))
    out = ctypes.create_string_buffer(capacity)
    got = ctypes.c_size_t(capacity)
    if not enc.BrotliEncoderCompress(ctypes.c_int(5), ctypes.c_int(window_log), ctypes.c_int(0),
                                     ctypes.c_size_t(len(data)), data, ctypes.byref(got), out):
        sys.exit("brotli compression failed")
    blob = out.raw[:got.value]
elif kind == "zstd":
    z = ctypes.CDLL("libzstd.so.1")
    z.ZSTD_createCCtx.restype = ctypes.c_void_p
    z.ZSTD_CCtx_setParameter.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    z.ZSTD_compress2.restype = ctypes.c_size_t
    z.ZSTD_compress2.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    z.ZSTD_compressBound.restype = ctypes.c_size_t
    z.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
    z.ZSTD_isError.argtypes = [ctypes.c_size_t]
    z.ZSTD_freeCCtx.argtypes = [ctypes.c_void_p]
    ZSTD_c_compressionLevel, ZSTD_c_windowLog, ZSTD_c_enableLongDistanceMatching = 100, 101, 160
    cctx = z.ZSTD_createCCtx()
    z.ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3)
    z.ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, window_log)
    if window_log > 27:
        z.ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, 1)
    capacity = z.ZSTD_compressBound(len(data))
    out = ctypes.create_string_buffer(capacity)
    n = z.ZSTD_compress2(cctx, out, capacity, data, len(data))
    z.ZSTD_freeCCtx(cctx)
    if z.ZSTD_isError(n):
        sys.exit("zstd compression failed")
    blob = out.raw[:n]
else:
    sys.exit(__doc__)

with open(out_path, "wb") as f:
    f.write(blob)
