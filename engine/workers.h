/* A small pool of worker threads shared by the sizing of views and the
 * read-ahead of sequential readers (view.c, view_sizing.c).
 *
 * workers_for runs fn(data, i) for every i in [0, count) on the pool and
 * on the calling thread, and returns when all are done: the caller always
 * takes part, so a job may itself call workers_for (a background sizing
 * running on a worker) without waiting on a pool it occupies.  A pool of
 * one thread (threads=1) runs everything on the caller, in order. */
#ifndef TRACEFS_WORKERS_H
#define TRACEFS_WORKERS_H

#include <glib.h>
#include <stdint.h>

struct workers;

/* threads counts the caller: threads - 1 pool threads are started.
 * 0 means the default (workers_default_threads). */
struct workers *workers_new(unsigned threads);
/* Sets workers_stopping (long jobs end early), runs the queued jobs to
 * their end and joins the threads; later jobs run on their caller. */
void workers_stop(struct workers *workers);
/* workers_stop, and frees. */
void workers_free(struct workers *workers);
unsigned workers_threads(const struct workers *workers);
/* Online CPUs, capped at LIMIT_WORKER_THREADS. */
unsigned workers_default_threads(void);

typedef void (*workers_fn)(void *data, uint64_t i);
void workers_for(struct workers *workers, uint64_t count, workers_fn fn, void *data);

/* Runs fn(data, 0) on a pool thread, later; with threads=1 or a pool
 * that is stopping, at once on the caller.  Returns FALSE when it ran on
 * the caller. */
gboolean workers_submit(struct workers *workers, workers_fn fn, void *data);

/* TRUE once workers_free has begun: long jobs stop early. */
gboolean workers_stopping(const struct workers *workers);

/* CPU time the calling thread has used, in ns: what a piece of work cost
 * whatever else shared the cores meanwhile. */
uint64_t workers_thread_cpu_ns(void);

#endif
