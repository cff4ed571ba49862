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
 * calls part_resume_admit.  *ticket is passed to part_resume_settle. */
struct codec_part_decoder *part_resume_take(struct part_resume *resume, const struct chunk_entry *entry,
                                            int *ticket);
/* Before a new decoder is made: the stream's decoders, kept or making a
 * part, take at most a quarter of what the cache may hold, or one alone
 * whatever its window; to make room the kept ones used least recently are
 * dropped, and then the caller waits for the others to finish.  However
 * many threads read at once, a few windows (16 MiB each at most) are
 * held.  Reserves `window` bytes in the cache. */
void part_resume_admit(struct part_resume *resume, uint64_t window);
/* After making the part: keeps `decoder` (at the part's end; may be NULL)
 * for the next part when there is room, TRUE then; else frees it and gives
 * its window back, FALSE. */
gboolean part_resume_settle(struct part_resume *resume, int ticket, struct codec_part_decoder *decoder,
                            uint64_t window);

#endif
