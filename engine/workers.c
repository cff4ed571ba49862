/* The worker pool (see workers.h). */
#include <pthread.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include "tracefs_limits.h"
#include "workers.h"

struct task {
    workers_fn fn;
    void *data;
    uint64_t i;
};

struct workers {
    unsigned threads;
    GThread **pool;              /* `threads` of them when threads > 1, else none */
    unsigned pool_size;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    GQueue tasks;                /* struct task * */
    gboolean stopping;
    /* The process that started the pool threads (0: not started).  A mount
     * forks into the background after opening the trace, and threads do
     * not survive a fork: the child starts its own on first use. */
    pid_t started_by;
};

/* One workers_for call: items are claimed in runs from `next`. */
struct loop {
    uint64_t count;
    uint64_t next;               /* atomic */
    uint64_t shares;             /* a claim takes 1 / shares of what is left */
    workers_fn fn;
    void *data;
    pthread_mutex_t lock;
    pthread_cond_t done;
    unsigned helpers;            /* pool threads still inside run_loop */
};

unsigned workers_default_threads(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1)
        return 1;
    return (unsigned)MIN((unsigned long)online, (unsigned long)LIMIT_WORKER_THREADS);
}

/* Claims shrink as the items run out (guided scheduling): neighbouring
 * items mostly run on one thread, in order, so a decoder that reads on
 * from where its last item ended (a merge, a decompressed chunk) need not
 * start over at each, and the last claims are small enough to even out
 * the threads' ends. */
static void run_loop(struct loop *loop)
{
    uint64_t first = __atomic_load_n(&loop->next, __ATOMIC_RELAXED);
    for (;;) {
        if (first >= loop->count)
            return;
        uint64_t take = MAX((loop->count - first) / loop->shares, 1);
        if (!__atomic_compare_exchange_n(&loop->next, &first, first + take, TRUE, __ATOMIC_RELAXED,
                                         __ATOMIC_RELAXED))
            continue;
        for (uint64_t i = first; i < first + take; i++)
            loop->fn(loop->data, i);
        first = __atomic_load_n(&loop->next, __ATOMIC_RELAXED);
    }
}

static void help_loop(void *data, uint64_t unused)
{
    (void)unused;
    struct loop *loop = data;
    run_loop(loop);
    pthread_mutex_lock(&loop->lock);
    if (--loop->helpers == 0)
        pthread_cond_signal(&loop->done);
    pthread_mutex_unlock(&loop->lock);
}

static gpointer worker_main(gpointer data)
{
    struct workers *workers = data;
    pthread_mutex_lock(&workers->lock);
    for (;;) {
        struct task *task = g_queue_pop_head(&workers->tasks);
        if (!task) {
            if (workers->stopping)
                break;
            pthread_cond_wait(&workers->wake, &workers->lock);
            continue;
        }
        pthread_mutex_unlock(&workers->lock);
        task->fn(task->data, task->i);
        g_free(task);
        pthread_mutex_lock(&workers->lock);
    }
    pthread_mutex_unlock(&workers->lock);
    return NULL;
}

struct workers *workers_new(unsigned threads)
{
    struct workers *workers = g_new0(struct workers, 1);
    if (threads == 0)
        threads = workers_default_threads();
    workers->threads = MIN(threads, LIMIT_WORKER_THREADS);
    pthread_mutex_init(&workers->lock, NULL);
    pthread_cond_init(&workers->wake, NULL);
    g_queue_init(&workers->tasks);
    /* As many pool threads as `threads`, not one fewer: a background job
     * (the sizing of /events) holds one while its loop's helpers run on
     * the others. */
    workers->pool_size = workers->threads > 1 ? workers->threads : 0;
    workers->pool = g_new0(GThread *, workers->pool_size + 1);
    return workers;
}

/* Starts the pool threads in this process if they are not running here;
 * called with the lock held. */
static void start_pool(struct workers *workers)
{
    pid_t self = getpid();
    if (workers->started_by == self)
        return;
    workers->started_by = self;
    for (unsigned i = 0; i < workers->pool_size; i++)
        workers->pool[i] = g_thread_new("tracefs-worker", worker_main, workers);
}

void workers_stop(struct workers *workers)
{
    if (!workers)
        return;
    pthread_mutex_lock(&workers->lock);
    __atomic_store_n(&workers->stopping, TRUE, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&workers->wake);
    /* Threads another process started are not ours to join. */
    gboolean join = workers->started_by == getpid();
    workers->started_by = 0;
    pthread_mutex_unlock(&workers->lock);
    if (join)
        for (unsigned i = 0; i < workers->pool_size; i++)
            g_thread_join(workers->pool[i]);
}

void workers_free(struct workers *workers)
{
    if (!workers)
        return;
    workers_stop(workers);
    g_free(workers->pool);
    pthread_mutex_destroy(&workers->lock);
    pthread_cond_destroy(&workers->wake);
    g_free(workers);
}

unsigned workers_threads(const struct workers *workers)
{
    return workers ? workers->threads : 1;
}

gboolean workers_stopping(const struct workers *workers)
{
    return workers && __atomic_load_n(&workers->stopping, __ATOMIC_RELAXED);
}

/* Queues a task; FALSE when the pool has no threads or is stopping. */
static gboolean enqueue(struct workers *workers, workers_fn fn, void *data, uint64_t i)
{
    if (!workers || workers->pool_size == 0)
        return FALSE;
    pthread_mutex_lock(&workers->lock);
    gboolean queued = !workers->stopping;
    if (queued) {
        start_pool(workers);
        struct task *task = g_new(struct task, 1);
        *task = (struct task){ fn, data, i };
        g_queue_push_tail(&workers->tasks, task);
        pthread_cond_signal(&workers->wake);
    }
    pthread_mutex_unlock(&workers->lock);
    return queued;
}

/* Removes the loop's queued helpers; returns how many. */
static unsigned withdraw_helpers(struct workers *workers, struct loop *loop)
{
    if (!workers || workers->pool_size == 0)
        return 0;
    unsigned removed = 0;
    pthread_mutex_lock(&workers->lock);
    for (GList *link = workers->tasks.head; link;) {
        GList *following = link->next;
        struct task *task = link->data;
        if (task->fn == help_loop && task->data == loop) {
            g_queue_delete_link(&workers->tasks, link);
            g_free(task);
            removed++;
        }
        link = following;
    }
    pthread_mutex_unlock(&workers->lock);
    return removed;
}

void workers_for(struct workers *workers, uint64_t count, workers_fn fn, void *data)
{
    struct loop loop = { .count = count, .fn = fn, .data = data, .shares = 2 * (uint64_t)workers_threads(workers) };
    pthread_mutex_init(&loop.lock, NULL);
    pthread_cond_init(&loop.done, NULL);
    uint64_t helpers = MIN(count, (uint64_t)workers_threads(workers)) - (count > 0);
    for (uint64_t h = 0; h < helpers; h++) {
        pthread_mutex_lock(&loop.lock);
        loop.helpers++;
        pthread_mutex_unlock(&loop.lock);
        if (!enqueue(workers, help_loop, &loop, 0)) {
            pthread_mutex_lock(&loop.lock);
            loop.helpers--;
            pthread_mutex_unlock(&loop.lock);
            break;
        }
    }
    run_loop(&loop);
    /* Helpers not started yet are not waited for: the pool may be busy
     * (or this may be its only thread). */
    unsigned unstarted = withdraw_helpers(workers, &loop);
    pthread_mutex_lock(&loop.lock);
    loop.helpers -= unstarted;
    while (loop.helpers > 0)
        pthread_cond_wait(&loop.done, &loop.lock);
    pthread_mutex_unlock(&loop.lock);
    pthread_mutex_destroy(&loop.lock);
    pthread_cond_destroy(&loop.done);
}

gboolean workers_submit(struct workers *workers, workers_fn fn, void *data)
{
    if (enqueue(workers, fn, data, 0))
        return TRUE;
    fn(data, 0);
    return FALSE;
}

uint64_t workers_thread_cpu_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}
