/* Loads ahead (load_ahead.h), on threads of their own: the workers' pool
 * starts in the daemon, after the fork, and an index pass runs before it;
 * and the workers are the threads rendering, which a load queued behind
 * their tasks would reach too late. */
#include <pthread.h>
#include <glib.h>
#include "load_ahead.h"
#include "stream.h"
#include "tracefs_limits.h"

struct load_request {
    struct stream *stream;
    size_t chunk;
};

struct load_ahead {
    GThread *threads[LIMIT_STREAM_LOAD_AHEAD_CHUNKS];
    unsigned thread_count;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    GQueue requests;       /* struct load_request, oldest first */
    gboolean stopping;
};

static gpointer loader_main(gpointer data)
{
    struct load_ahead *load_ahead = data;
    pthread_mutex_lock(&load_ahead->lock);
    for (;;) {
        struct load_request *request = g_queue_pop_head(&load_ahead->requests);
        if (!request) {
            if (load_ahead->stopping)
                break;
            pthread_cond_wait(&load_ahead->wake, &load_ahead->lock);
            continue;
        }
        pthread_mutex_unlock(&load_ahead->lock);
        stream_load_ahead(request->stream, request->chunk);
        g_free(request);
        pthread_mutex_lock(&load_ahead->lock);
    }
    pthread_mutex_unlock(&load_ahead->lock);
    return NULL;
}

static void request_load(void *data, struct stream *stream, size_t chunk)
{
    struct load_ahead *load_ahead = data;
    struct load_request *request = g_new(struct load_request, 1);
    *request = (struct load_request){ stream, chunk };
    pthread_mutex_lock(&load_ahead->lock);
    g_queue_push_tail(&load_ahead->requests, request);
    pthread_cond_signal(&load_ahead->wake);
    pthread_mutex_unlock(&load_ahead->lock);
}

struct load_ahead *load_ahead_start(unsigned threads)
{
    if (threads < 2)
        return NULL;
    struct load_ahead *load_ahead = g_new0(struct load_ahead, 1);
    pthread_mutex_init(&load_ahead->lock, NULL);
    pthread_cond_init(&load_ahead->wake, NULL);
    g_queue_init(&load_ahead->requests);
    /* More loaders than chunks loaded ahead would wait. */
    load_ahead->thread_count = MIN(threads - 1, LIMIT_STREAM_LOAD_AHEAD_CHUNKS);
    for (unsigned i = 0; i < load_ahead->thread_count; i++)
        load_ahead->threads[i] = g_thread_new("tracefs-loader", loader_main, load_ahead);
    return load_ahead;
}

void load_ahead_begin(struct load_ahead *load_ahead)
{
    if (load_ahead)
        stream_load_ahead_begin(request_load, load_ahead);
}

void load_ahead_end(struct load_ahead *load_ahead)
{
    if (load_ahead)
        stream_load_ahead_end();
}

void load_ahead_stop(struct load_ahead *load_ahead)
{
    if (!load_ahead)
        return;
    pthread_mutex_lock(&load_ahead->lock);
    load_ahead->stopping = TRUE;
    g_queue_clear_full(&load_ahead->requests, g_free);
    pthread_cond_broadcast(&load_ahead->wake);
    pthread_mutex_unlock(&load_ahead->lock);
    for (unsigned i = 0; i < load_ahead->thread_count; i++)
        g_thread_join(load_ahead->threads[i]);
    pthread_mutex_destroy(&load_ahead->lock);
    pthread_cond_destroy(&load_ahead->wake);
    g_free(load_ahead);
}
