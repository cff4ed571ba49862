/* Every limit tracefs applies to numbers read from a trace, in one place.
 * A trace is untrusted input: each count, length, index and depth is
 * checked against these before it is used to allocate, loop or recurse. */
#ifndef TRACEFS_LIMITS_H
#define TRACEFS_LIMITS_H

/* ---- engine ---- */
/* Uncompressed bytes of one chunk: rr writes 1 MiB chunks, apitrace 1 MiB,
 * gzip seek regions 4 MiB; anything larger is a corrupt header. */
#define LIMIT_CHUNK_BYTES           (64u << 20)
/* Chunk size used to read uncompressed files through the cache. */
#define LIMIT_PLAIN_CHUNK_BYTES     (1u << 20)
/* Chunks in one stream: 2^24 chunks of 1 MiB is 16 TiB of trace. */
#define LIMIT_STREAM_CHUNKS         (1u << 24)
/* One rendered record (a text line or JSON object) in a view. */
#define LIMIT_RECORD_TEXT_BYTES     (64u << 20)
/* Distance between checkpoints of a rendered view: a read decodes at most
 * this much output before reaching the bytes it wants. */
#define LIMIT_CHECKPOINT_SPACING    (64u << 10)
/* Default chunk cache budget (-o cache_size=). */
#define LIMIT_DEFAULT_CACHE_BYTES   (256ull << 20)
/* Entries in /errors: a damaged file can produce one per record; past this
 * only a count is kept, so a hostile file cannot grow memory through it. */
#define LIMIT_ERRORS_KEPT           10000u
/* Length of a name in the tree (NAME_MAX). */
#define LIMIT_NAME_BYTES            255u
/* Nodes in the tree built at index time (huge lists use families). */
#define LIMIT_TREE_NODES            (1u << 26)

/* ---- fxt ---- */
/* ---- apitrace ---- */
/* ---- rr / capnp ---- */
/* ---- xray ---- */
/* ---- sp-rtrace ---- */

#endif
