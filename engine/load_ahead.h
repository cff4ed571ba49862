/* Chunks decompressed ahead of an index pass.  An index pass reads its
 * streams in order on one thread; loader threads decompressing the chunks
 * after the one it reads (stream_set_load_ahead) leave it the parsing
 * alone.  Only the index pass: when views are sized or read, the workers
 * already render on every core. */
#ifndef TRACEFS_LOAD_AHEAD_H
#define TRACEFS_LOAD_AHEAD_H

struct load_ahead;
struct stream;

/* threads: the cores the trace may use (-o threads), the reader's
 * included.  NULL with one: nothing to hand the loads to.  Every function
 * takes NULL. */
struct load_ahead *load_ahead_start(unsigned threads);
/* The stream's cursors load ahead until load_ahead_stop. */
void load_ahead_add_stream(struct load_ahead *load_ahead, struct stream *stream);
/* Turns loading ahead off on every stream given, drops the loads not
 * started, and joins the loader threads: none outlives the index pass
 * (a mount forks into a daemon after it, and a fork keeps no thread). */
void load_ahead_stop(struct load_ahead *load_ahead);

#endif
