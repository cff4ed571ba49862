/* Chunks decompressed ahead of a sequential reader on loader threads.  An
 * index pass reads its streams in order on one thread, and a read-ahead
 * worker renders a run of a view's blocks in order: loaders decompressing
 * the chunks after the one they read (stream_load_ahead_begin) leave them
 * the parsing, and keep two workers rendering neighbouring blocks from
 * waiting, one for the other's decompression of the chunk both need. */
#ifndef TRACEFS_LOAD_AHEAD_H
#define TRACEFS_LOAD_AHEAD_H

struct load_ahead;

/* threads: the cores the trace may use (-o threads), the reader's
 * included.  NULL with one: nothing to hand the loads to.  Every function
 * takes NULL. */
struct load_ahead *load_ahead_start(unsigned threads);
/* The calling thread's cursors load ahead through the loaders until
 * load_ahead_end (around one pass or one run of blocks). */
void load_ahead_begin(struct load_ahead *load_ahead);
void load_ahead_end(struct load_ahead *load_ahead);
/* Drops the loads not started and joins the loader threads, once no
 * thread is between begin and end.  The index pass's loaders stop when it
 * ends: a mount forks into a daemon after it, and a fork keeps no thread. */
void load_ahead_stop(struct load_ahead *load_ahead);

#endif
