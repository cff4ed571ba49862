/* Decoders kept between the parts of a big chunk (codec_decompress_part),
 * per stream: reading a chunk's parts in order decodes it once, where
 * decoding each part from the chunk's start was quadratic in its parts
 * (a 48 MiB deflate block: 4.5 s).  Thread-safe. */
#ifndef TRACEFS_PART_RESUME_H
#define TRACEFS_PART_RESUME_H

#include <glib.h>
#include "chunk_cache.h"
#include "codec.h"

struct part_resume;

struct part_resume *part_resume_new(struct chunk_cache *cache);
/* Frees the kept decoders and gives their windows back to the cache; no
 * part may be in the making. */
void part_resume_free(struct part_resume *resume);

/* Before making the part `entry`: returns a kept decoder of its chunk
 * standing at or before its start (waiting for one another thread is
 * making, which will stand there), or NULL.  A decoder returned brings its
 * `window` bytes reserved in the cache with it; with NULL the caller
 * reserves them.  *ticket is passed to part_resume_settle. */
struct codec_part_decoder *part_resume_take(struct part_resume *resume, const struct chunk_entry *entry,
                                            int *ticket);
/* After making the part: keeps `decoder` (at the part's end; may be NULL)
 * for the next part when there is room, TRUE then; FALSE when the caller
 * is to free it and unreserve its window. */
gboolean part_resume_settle(struct part_resume *resume, int ticket, struct codec_part_decoder *decoder,
                            uint64_t window);

#endif
