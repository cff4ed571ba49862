/* A trace file that is one compressed stream (gzip, zstd or brotli: an
 * apitrace container, a compressed log), indexed into the chunk table of
 * a stream read through the chunk cache:
 *  gzip    one deflate stream: seek points (bit offset + 32 KiB window,
 *          kept deflated) every `span` of output, found by one inflate
 *          pass, as zlib's zran example does; the span doubles where the
 *          points would hold more than `budget` bytes
 *  zstd    a sequence of frames (seekable zstd: frames of bounded size + a
 *          skippable seek-table frame): one chunk per frame
 *  brotli  no magic, no seek points: one chunk of the whole stream
 *  (a brotli stream or zstd frame decoding to more than
 *  LIMIT_SUBCHUNK_THRESHOLD is served in sub-chunks: see stream.c)
 * Damage after a readable prefix keeps the prefix, with "container" lines
 * in /errors; NULL when nothing can be read. */
#ifndef TRACEFS_COMPRESSED_FILE_H
#define TRACEFS_COMPRESSED_FILE_H

#include <glib.h>
#include <stdint.h>
#include "codec.h"

struct trace;
struct stream;

struct stream *compressed_file_gzip(struct trace *trace, uint64_t span, uint64_t budget);
struct stream *compressed_file_zstd(struct trace *trace);
struct stream *compressed_file_brotli(struct trace *trace);
/* The trace's stream "stream" over the file from a table of chunks (struct
 * chunk_entry, contiguous; taken), counted in the indexing progress. */
struct stream *compressed_file_stream(struct trace *trace, enum codec codec, GArray *chunks);

#endif
