/* The progress line (progress.h).  A thread wakes every interval and
 * rewrites one line on stderr from the trace's counters, which the
 * streams (bytes loaded) and the view sizing (bytes rendered) keep. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "progress.h"

/* How often the line is rewritten; the first line waits that long too, so
 * that a quick mount writes nothing.  TRACEFS_PROGRESS_MS changes it (the
 * tests make short phases visible with it). */
#define PROGRESS_DEFAULT_MS 500

struct progress {
    struct trace *trace;
    enum progress_phase phase;
    uint64_t total;               /* the trace's bytes, for the index pass */
    gint64 phase_start;
    gint64 sized_at_start;        /* trace->bytes_sized when sizing began */
    long interval_ms;
    gboolean done;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    GThread *thread;
};

static void print_indexing(const struct progress *progress, double seconds)
{
    uint64_t done = (uint64_t)__atomic_load_n(&progress->trace->bytes_loaded, __ATOMIC_RELAXED);
    double rate = seconds > 0 ? (double)done / seconds : 0;
    if (progress->total == 0) {       /* an rr directory of nothing but subdirectories */
        fprintf(stderr, "\rtracefs: indexing %.1f MB, %.0f MB/s\033[K", (double)done / 1e6, rate / 1e6);
        return;
    }
    done = MIN(done, progress->total);
    double eta = rate > 0 ? (double)(progress->total - done) / rate : 0;
    fprintf(stderr, "\rtracefs: indexing %.1f of %.1f MB (%3.0f%%), %.0f MB/s, ETA %.0f s\033[K",
            (double)done / 1e6, (double)progress->total / 1e6, 100.0 * (double)done / (double)progress->total,
            rate / 1e6, eta);
}

/* The size of /events is what this phase finds out: no percentage, the
 * text rendered so far and its rate. */
static void print_sizing(const struct progress *progress, double seconds)
{
    gint64 done = __atomic_load_n(&progress->trace->bytes_sized, __ATOMIC_RELAXED) - progress->sized_at_start;
    double rate = seconds > 0 ? (double)done / seconds : 0;
    fprintf(stderr, "\rtracefs: sizing /events: %.1f MB of text rendered, %.0f MB/s, %.1f s\033[K",
            (double)done / 1e6, rate / 1e6, seconds);
}

static void print_line(const struct progress *progress)
{
    double seconds = (double)(g_get_monotonic_time() - progress->phase_start) / 1e6;
    if (progress->phase == PROGRESS_INDEXING)
        print_indexing(progress, seconds);
    else
        print_sizing(progress, seconds);
}

static gpointer progress_thread(gpointer data)
{
    struct progress *progress = data;
    pthread_mutex_lock(&progress->lock);
    while (!progress->done) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += progress->interval_ms / 1000;
        deadline.tv_nsec += (progress->interval_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&progress->wake, &progress->lock, &deadline) == ETIMEDOUT)
            print_line(progress);
    }
    pthread_mutex_unlock(&progress->lock);
    fprintf(stderr, "\r\033[K");
    return NULL;
}

static long interval_ms(void)
{
    const char *text = g_getenv("TRACEFS_PROGRESS_MS");
    long ms = text ? strtol(text, NULL, 10) : 0;
    return ms > 0 && ms <= 60000 ? ms : PROGRESS_DEFAULT_MS;
}

static void begin_phase(struct progress *progress, enum progress_phase phase)
{
    progress->phase = phase;
    progress->phase_start = g_get_monotonic_time();
    progress->sized_at_start = __atomic_load_n(&progress->trace->bytes_sized, __ATOMIC_RELAXED);
}

struct progress *progress_start(struct trace *trace, enum progress_phase phase)
{
    if (!isatty(STDERR_FILENO))
        return NULL;
    struct progress *progress = g_new0(struct progress, 1);
    progress->trace = trace;
    progress->total = trace->source_bytes;
    progress->interval_ms = interval_ms();
    begin_phase(progress, phase);
    pthread_mutex_init(&progress->lock, NULL);
    pthread_cond_init(&progress->wake, NULL);
    progress->thread = g_thread_new("progress", progress_thread, progress);
    return progress;
}

void progress_stop(struct progress *progress)
{
    if (!progress)
        return;
    pthread_mutex_lock(&progress->lock);
    progress->done = TRUE;
    pthread_cond_signal(&progress->wake);
    pthread_mutex_unlock(&progress->lock);
    g_thread_join(progress->thread);
    pthread_mutex_destroy(&progress->lock);
    pthread_cond_destroy(&progress->wake);
    g_free(progress);
}
