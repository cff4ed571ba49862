/* Views and streams: every byte range of a view equals the same range of a
 * full render; compressed streams read across chunk boundaries. */
#include <errno.h>
#include <fcntl.h>
#include <snappy-c.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "chunk_cache.h"
#include "stream.h"
#include "tracefs_limits.h"
#include "trace.h"
#include "view.h"
#include "workers.h"

/* Record i is a line of pseudo-random length; arg[0] records in all. */
static void lines_begin(const struct view *view, struct view_cursor *cursor)
{
    (void)view;
    cursor->word[0] = 0;
}

static enum view_step lines_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    uint64_t i = cursor->word[0];
    if (i >= view->arg[0])
        return VIEW_END;
    g_string_append_printf(out, "record %" G_GUINT64_FORMAT " ", i);
    for (uint64_t k = 0; k < (i * 7919) % 300; k++)
        g_string_append_c(out, (char)('a' + (i + k) % 26));
    g_string_append_c(out, '\n');
    cursor->word[0] = i + 1;
    return VIEW_RECORD;
}

static const struct view_ops lines_ops = { .begin = lines_begin, .next = lines_next };

/* The same lines, cut into segments every arg[1] records; record arg[2]
 * (when not 0) fails with an error, as a damaged trace would. */
static enum view_step segmented_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    if (view->arg[2] && cursor->word[0] == view->arg[2]) {
        trace_error(view->context, "test", cursor->word[0], "record %" G_GUINT64_FORMAT " fails", cursor->word[0]);
        return VIEW_ERROR;
    }
    return lines_next(view, cursor, out);
}

static uint32_t segmented_cuts(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    uint32_t count = 0;
    for (uint64_t i = view->arg[1]; i < view->arg[0] && count < max; i += view->arg[1]) {
        memset(&cursors[count], 0, sizeof cursors[count]);
        cursors[count++].word[0] = i;
    }
    return count;
}

static const struct view_ops segmented_ops = { .begin = lines_begin, .next = segmented_next,
                                               .segments = segmented_cuts };

/* A trace with just what sizing needs: workers and /errors. */
static struct trace *worker_trace(unsigned threads)
{
    struct trace *trace = g_new0(struct trace, 1);
    pthread_mutex_init(&trace->errors_lock, NULL);
    trace->errors = g_string_new(NULL);
    trace->workers = workers_new(threads);
    return trace;
}

static void worker_trace_free(struct trace *trace)
{
    workers_free(trace->workers);
    g_string_free(trace->errors, TRUE);
    pthread_mutex_destroy(&trace->errors_lock);
    g_free(trace);
}

/* Size, checkpoints, bytes and /errors are the same for any thread count
 * (1, 2, 7: more workers than cores), also when a segment fails (the view
 * ends there, later segments' errors are not reported). */
static void test_parallel_sizing_is_identical(void)
{
    const uint64_t fail_at[] = { 0, 7777 };
    for (unsigned f = 0; f < G_N_ELEMENTS(fail_at); f++) {
        struct view_index reference = { 0 };
        GString *reference_text = NULL, *reference_errors = NULL;
        const unsigned threads[] = { 1, 2, 7 };
        for (unsigned t = 0; t < G_N_ELEMENTS(threads); t++) {
            struct trace *trace = worker_trace(threads[t]);
            struct view view = { .ops = &segmented_ops, .context = trace, .arg = { 20000, 333, fail_at[f] } };
            struct view_index index;
            view_index_build(trace, &view, &index);
            GString *text = g_string_new(NULL);
            g_string_set_size(text, index.size);
            g_assert_cmpint(view_read(trace, &view, &index, 0, text->str, index.size), ==, (ssize_t)index.size);
            g_assert_cmpint(index.failed, ==, fail_at[f] != 0);
            if (t == 0) {
                reference = index;
                reference_text = text;
                reference_errors = g_string_new(trace->errors->str);
                /* A checkpoint starts each segment, at least. */
                g_assert_cmpuint(index.checkpoint_count, >, (fail_at[f] ? fail_at[f] : 20000) / 333);
                g_assert_cmpuint(trace->error_count, ==, fail_at[f] ? 1 : 0);
            } else {
                g_assert_cmpuint(index.size, ==, reference.size);
                g_assert_cmpuint(index.checkpoint_count, ==, reference.checkpoint_count);
                g_assert_true(memcmp(index.checkpoints, reference.checkpoints,
                                     index.checkpoint_count * sizeof *index.checkpoints) == 0);
                g_assert_true(g_string_equal(text, reference_text));
                g_assert_cmpstr(trace->errors->str, ==, reference_errors->str);
                view_index_clear(&index);
                g_string_free(text, TRUE);
            }
            worker_trace_free(trace);
        }
        /* Without segments (a view of the same lines rendered in one go)
         * the bytes are the same: the joins lose and repeat nothing. */
        struct view plain = { .ops = &lines_ops, .arg = { fail_at[f] ? fail_at[f] : 20000 } };
        GString *full = g_string_new(NULL);
        g_assert_cmpint(view_render_all(NULL, &plain, full), ==, 0);
        g_assert_true(g_string_equal(full, reference_text));
        g_string_free(full, TRUE);
        g_string_free(reference_text, TRUE);
        g_string_free(reference_errors, TRUE);
        view_index_clear(&reference);
    }
}

/* workers_for runs every item once, also nested inside a job on the pool. */
static void count_item(void *data, uint64_t i)
{
    __atomic_fetch_add((uint64_t *)data + (i % 4), i + 1, __ATOMIC_RELAXED);
}

struct nested {
    struct workers *workers;
    uint64_t sums[4];
};

static void nested_job(void *data, uint64_t unused)
{
    (void)unused;
    struct nested *nested = data;
    workers_for(nested->workers, 1000, count_item, nested->sums);
}

static void test_workers_run_each_item_once(void)
{
    for (unsigned threads = 1; threads <= 7; threads += 3) {
        struct workers *workers = workers_new(threads);
        struct nested nested = { workers, { 0 } };
        workers_for(workers, 8, nested_job, &nested);
        uint64_t total = 0;
        for (int k = 0; k < 4; k++)
            total += nested.sums[k];
        g_assert_cmpuint(total, ==, 8 * (1000 * 1001 / 2));
        workers_free(workers);
    }
}

static void test_random_ranges_equal_full_render(void)
{
    struct view view = { .ops = &lines_ops, .arg = { 20000 } };
    GString *full = g_string_new(NULL);
    struct view_cursor cursor;
    lines_begin(&view, &cursor);
    while (lines_next(&view, &cursor, full) == VIEW_RECORD)
        ;
    struct view_index index;
    view_index_build(NULL, &view, &index);
    g_assert_cmpuint(index.size, ==, full->len);
    g_assert_cmpuint(index.checkpoint_count, >, full->len / (70 * 1024));
    char *buf = g_malloc(300000);
    for (int round = 0; round < 500; round++) {
        uint64_t offset = (uint64_t)g_random_int_range(0, (gint32)full->len + 10);
        size_t len = (size_t)g_random_int_range(0, 300000);
        ssize_t n = view_read(NULL, &view, &index, offset, buf, len);
        size_t expect = offset >= full->len ? 0 : MIN(len, full->len - offset);
        g_assert_cmpint(n, ==, (ssize_t)expect);
        g_assert_true(memcmp(buf, full->str + MIN(offset, full->len), expect) == 0);
    }
    /* The last byte alone, as `tail -c 1` asks for it. */
    g_assert_cmpint(view_read(NULL, &view, &index, full->len - 1, buf, 1), ==, 1);
    g_assert_cmpint(buf[0], ==, '\n');
    g_free(buf);
    view_index_clear(&index);
    g_string_free(full, TRUE);
}

static void test_empty_view(void)
{
    struct view view = { .ops = &lines_ops, .arg = { 0 } };
    struct view_index index;
    view_index_build(NULL, &view, &index);
    g_assert_cmpuint(index.size, ==, 0);
    char c;
    g_assert_cmpint(view_read(NULL, &view, &index, 0, &c, 1), ==, 0);
    view_index_clear(&index);
}

/* Three records, the middle one arg[0] bytes; counts renders of it
 * (atomically: the parallel test renders from several threads). */
static gint big_renders;

static enum view_step big_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    uint64_t i = cursor->word[0];
    if (i >= 3)
        return VIEW_END;
    if (i == 1) {
        g_atomic_int_inc(&big_renders);
        for (uint64_t k = 0; k < view->arg[0]; k++)
            g_string_append_c(out, (char)('a' + k % 23));
    } else {
        g_string_append_printf(out, "small %" G_GUINT64_FORMAT "\n", i);
    }
    cursor->word[0] = i + 1;
    return VIEW_RECORD;
}

static const struct view_ops big_ops = { .begin = lines_begin, .next = big_next };

/* `cat` of a file with a 4 MiB record reads it in 128 KiB pieces: the
 * record is rendered once for the sizing and once for all the reads, not
 * once per read; the bytes are those of a full render. */
static void test_big_record_rendered_once(void)
{
    struct view view = { .ops = &big_ops, .arg = { 4u << 20 } };
    GString *full = g_string_new(NULL);
    g_assert_cmpint(view_render_all(NULL, &view, full), ==, 0);
    struct view_index index;
    view_index_build(NULL, &view, &index);
    g_atomic_int_set(&big_renders, 0);
    uint64_t hits = view_kept_record_hits();
    char *buf = g_malloc(128 << 10);
    uint64_t offset = 0;
    ssize_t n;
    while ((n = view_read(NULL, &view, &index, offset, buf, 128 << 10)) > 0) {
        g_assert_true(memcmp(buf, full->str + offset, (size_t)n) == 0);
        offset += (uint64_t)n;
    }
    g_assert_cmpint(n, ==, 0);
    g_assert_cmpuint(offset, ==, full->len);
    g_assert_cmpint(g_atomic_int_get(&big_renders), ==, 1);
    g_assert_cmpuint(view_kept_record_hits() - hits, >=, 31);
    /* Another view (other arg) never gets the kept text. */
    struct view other = { .ops = &big_ops, .arg = { (4u << 20) + 1 } };
    struct view_index other_index;
    view_index_build(NULL, &other, &other_index);
    g_assert_cmpint(view_read(NULL, &other, &other_index, 100000, buf, 10), ==, 10);
    g_assert_cmpint(buf[0], ==, 'a' + (100000 - 8) % 23);
    view_forget_kept_record();
    g_free(buf);
    view_index_clear(&index);
    view_index_clear(&other_index);
    g_string_free(full, TRUE);
}

/* The kept record counts in the trace's text cache while kept and is
 * given back when the slot is forgotten: one big record must not sit
 * outside cache_size. */
static void test_kept_record_is_charged(void)
{
    struct view view = { .ops = &big_ops, .arg = { 4u << 20 } };
    struct trace *trace = g_new0(struct trace, 1);
    trace->text_cache = chunk_cache_new(64u << 20);
    struct view_index index;
    view_index_build(NULL, &view, &index);
    char *buf = g_malloc(128 << 10);
    g_assert_cmpint(view_read(trace, &view, &index, 1000, buf, 128 << 10), ==, 128 << 10);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(trace->text_cache, &stats);
    g_assert_cmpuint(stats.bytes_held, >=, 4u << 20);
    view_forget_kept_record();
    chunk_cache_get_stats(trace->text_cache, &stats);
    g_assert_cmpuint(stats.bytes_held, ==, 0);
    g_free(buf);
    view_index_clear(&index);
    chunk_cache_free(trace->text_cache);
    g_free(trace);
}


/* Readers in several threads, each on its own views of big records, read
 * random ranges while the others fill and take the one kept-record slot:
 * every byte equals the full render (ThreadSanitizer runs this too). */
#define PARALLEL_READERS 4
#define PARALLEL_ROUNDS 60

struct big_reader {
    struct view view[2];
    struct view_index index[2];
    GString *full[2];
};

static gpointer read_big_records(gpointer data)
{
    struct big_reader *reader = data;
    char *buf = g_malloc(100 << 10);
    GRand *rand = g_rand_new_with_seed((guint32)reader->view[0].arg[0]);
    for (int round = 0; round < PARALLEL_ROUNDS; round++) {
        int which = g_rand_int_range(rand, 0, 2);
        const GString *full = reader->full[which];
        uint64_t offset = (uint64_t)g_rand_int_range(rand, 0, (gint32)full->len);
        size_t len = (size_t)g_rand_int_range(rand, 1, 100 << 10);
        ssize_t n = view_read(NULL, &reader->view[which], &reader->index[which], offset, buf, len);
        g_assert_cmpint(n, ==, (ssize_t)MIN(len, full->len - offset));
        g_assert_true(memcmp(buf, full->str + offset, (size_t)n) == 0);
    }
    g_rand_free(rand);
    g_free(buf);
    return NULL;
}

static void test_big_records_parallel_readers(void)
{
    struct big_reader readers[PARALLEL_READERS];
    GThread *threads[PARALLEL_READERS];
    for (int i = 0; i < PARALLEL_READERS; i++) {
        for (int k = 0; k < 2; k++) {
            struct big_reader *reader = &readers[i];
            reader->view[k] = (struct view){ .ops = &big_ops, .arg = { (96u << 10) + (uint64_t)(2 * i + k) * 997 } };
            reader->full[k] = g_string_new(NULL);
            g_assert_cmpint(view_render_all(NULL, &reader->view[k], reader->full[k]), ==, 0);
            view_index_build(NULL, &reader->view[k], &reader->index[k]);
        }
    }
    for (int i = 0; i < PARALLEL_READERS; i++)
        threads[i] = g_thread_new("reader", read_big_records, &readers[i]);
    for (int i = 0; i < PARALLEL_READERS; i++)
        g_thread_join(threads[i]);
    view_forget_kept_record();
    for (int i = 0; i < PARALLEL_READERS; i++) {
        for (int k = 0; k < 2; k++) {
            view_index_clear(&readers[i].index[k]);
            g_string_free(readers[i].full[k], TRUE);
        }
    }
}

/* The lines view, counting its renders: the kept-text tests prove reads
 * come from the cache by rendering nothing. */
static gint line_renders;

static enum view_step counted_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    g_atomic_int_inc(&line_renders);
    return lines_next(view, cursor, out);
}

/* No begin: its records start at the zero cursor. */
static const struct view_ops counted_ops = { .next = counted_next };

static GString *render_lines(const struct view *view)
{
    GString *full = g_string_new(NULL);
    g_assert_cmpint(view_render_all(NULL, view, full), ==, 0);
    return full;
}

/* `cat` in 128 KiB reads, each piece compared with the full render. */
/* A sequential reader of the view, through `trace`'s workers (NULL: none). */
static void trace_cat_equals(struct trace *trace, const struct view *view, const struct view_index *index,
                             const GString *full)
{
    char *buf = g_malloc(128 << 10);
    uint64_t offset = 0;
    ssize_t n;
    while ((n = view_read(trace, view, index, offset, buf, 128 << 10)) > 0) {
        g_assert_true(memcmp(buf, full->str + offset, (size_t)n) == 0);
        offset += (uint64_t)n;
    }
    g_assert_cmpint(n, ==, 0);
    g_assert_cmpuint(offset, ==, full->len);
    g_free(buf);
}

static void cat_equals(const struct view *view, const struct view_index *index, const GString *full)
{
    trace_cat_equals(NULL, view, index, full);
}

static void random_reads_equal(const struct view *view, const struct view_index *index, const GString *full)
{
    char *buf = g_malloc(300000);
    for (int round = 0; round < 300; round++) {
        uint64_t offset = (uint64_t)g_random_int_range(0, (gint32)full->len);
        size_t len = (size_t)g_random_int_range(1, 300000);
        ssize_t n = view_read(NULL, view, index, offset, buf, len);
        g_assert_cmpint(n, ==, (ssize_t)MIN(len, full->len - offset));
        g_assert_true(memcmp(buf, full->str + offset, (size_t)n) == 0);
    }
    g_free(buf);
}

/* Every read of a view whose text is all kept: the bytes of the full
 * render, and not one record rendered for them. */
static void kept_reads_render_nothing(const struct view *view, const struct view_index *index, const GString *full)
{
    g_assert_cmpuint(index->size, ==, full->len);
    g_assert_cmpuint(index->text_blocks, ==, index->checkpoint_count);
    g_atomic_int_set(&line_renders, 0);
    cat_equals(view, index, full);
    random_reads_equal(view, index, full);
    g_assert_cmpint(g_atomic_int_get(&line_renders), ==, 0);
}

/* Clearing the index gives back every kept block: the cache is left empty. */
static void free_kept_text(struct view_index *index, struct chunk_cache *cache, GString *full)
{
    view_index_clear(index);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_held, ==, 0);
    chunk_cache_free(cache);
    g_string_free(full, TRUE);
}

/* The sizing pass keeps the text: the `cat` after it renders nothing. */
static void test_kept_text_read_without_rendering(void)
{
    struct view view = { .ops = &counted_ops, .arg = { 20000 } };
    GString *full = render_lines(&view);
    struct chunk_cache *cache = chunk_cache_new(64u << 20);
    struct view_index index;
    view_index_build_keeping_text(NULL, &view, cache, 16u << 20, &index);
    g_assert_cmpuint(index.checkpoint_count, >, 10);
    kept_reads_render_nothing(&view, &index, full);
    free_kept_text(&index, cache, full);
}

static enum view_step counted_segmented_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    g_atomic_int_inc(&line_renders);
    return segmented_next(view, cursor, out);
}

static const struct view_ops counted_segmented_ops = { .begin = lines_begin, .next = counted_segmented_next,
                                                       .segments = segmented_cuts };

/* Reads of the kept blocks (the view's first ones): the bytes of the full
 * render, and not one record rendered for them. */
static void kept_prefix_reads_render_nothing(const struct view *view, const struct view_index *index,
                                             const GString *full)
{
    g_assert_cmpuint(index->text_blocks, >=, 1);
    uint64_t end = index->text_blocks < index->checkpoint_count ? index->checkpoints[index->text_blocks].offset
                                                                : index->size;
    char *buf = g_malloc(128 << 10);
    g_atomic_int_set(&line_renders, 0);
    for (uint64_t offset = 0; offset < end;) {
        ssize_t n = view_read(NULL, view, index, offset, buf, (size_t)MIN(end - offset, (uint64_t)(128 << 10)));
        g_assert_cmpint(n, >, 0);
        g_assert_true(memcmp(buf, full->str + offset, (size_t)n) == 0);
        offset += (uint64_t)n;
    }
    g_assert_cmpint(g_atomic_int_get(&line_renders), ==, 0);
    g_free(buf);
}

/* A parallel sizing keeps the text of the segments that run in order from
 * the first (a worker's run of neighbouring segments), numbered as one
 * view: reading them renders nothing, at any thread count; with a small
 * pool the kept blocks are the view's first ones, and a failed segment
 * keeps nothing past it. */
static void test_kept_text_of_parallel_segments(void)
{
    const unsigned threads[] = { 2, 7 };
    for (unsigned t = 0; t < G_N_ELEMENTS(threads); t++) {
        struct trace *trace = worker_trace(threads[t]);
        struct view view = { .ops = &counted_segmented_ops, .context = trace, .arg = { 20000, 1500, 0 } };
        GString *full = render_lines(&view);
        struct chunk_cache *cache = chunk_cache_new(64u << 20);
        struct view_index index;
        view_index_build_keeping_text(trace, &view, cache, 16u << 20, &index);
        g_assert_cmpuint(index.size, ==, full->len);
        kept_prefix_reads_render_nothing(&view, &index, full);
        cat_equals(&view, &index, full);
        random_reads_equal(&view, &index, full);
        view_index_clear(&index);

        view_index_build_keeping_text(trace, &view, cache, 5 * LIMIT_CHECKPOINT_SPACING, &index);
        g_assert_cmpuint(index.text_blocks, >=, 1);
        g_assert_cmpuint(index.text_blocks, <=, 5);
        cat_equals(&view, &index, full);
        random_reads_equal(&view, &index, full);
        view_index_clear(&index);

        view.arg[2] = 9700;
        view_index_build_keeping_text(trace, &view, cache, 16u << 20, &index);
        g_assert_true(index.failed);
        g_assert_cmpuint(index.text_blocks, <, index.checkpoint_count);
        g_string_truncate(full, 0);
        for (uint64_t offset = 0; offset < index.size;) {
            char buf[4096];
            ssize_t n = view_read(NULL, &view, &index, offset, buf, sizeof buf);
            g_assert_cmpint(n, >, 0);
            g_string_append_len(full, buf, n);
            offset += (uint64_t)n;
        }
        g_assert_cmpuint(full->len, ==, index.size);
        free_kept_text(&index, cache, full);
        worker_trace_free(trace);
    }
}

/* A reader going through a view in reads much smaller than its blocks
 * (checkpoints 64 KiB apart and more, reads of 1,000 bytes): each read
 * starts where the last one stopped, not at its block's checkpoint, so
 * every line is rendered about once, not once per read of its block. */
static void test_small_sequential_reads_render_each_line_once(void)
{
    struct view view = { .ops = &counted_ops, .arg = { 20000 } };
    GString *full = render_lines(&view);
    struct view_index index;
    view_index_build(NULL, &view, &index);
    g_assert_cmpuint(index.checkpoint_count, >, 2);
    g_atomic_int_set(&line_renders, 0);
    char buf[1000];
    uint64_t reads = 0;
    for (uint64_t offset = 0; offset < index.size; reads++) {
        ssize_t n = view_read(NULL, &view, &index, offset, buf, sizeof buf);
        g_assert_cmpint(n, >, 0);
        g_assert_true(memcmp(buf, full->str + offset, (size_t)n) == 0);
        offset += (uint64_t)n;
    }
    /* A line a read ends inside is rendered again by the next read. */
    g_assert_cmpint(g_atomic_int_get(&line_renders), <=, 20000 + reads);
    random_reads_equal(&view, &index, full);
    view_index_clear(&index);
    g_string_free(full, TRUE);
}

/* A keeping budget of a few blocks: those are read from the cache, the rest
 * rendered, and reads across the border are whole. */
static void test_kept_text_partly(void)
{
    struct view view = { .ops = &counted_ops, .arg = { 20000 } };
    GString *full = render_lines(&view);
    struct chunk_cache *cache = chunk_cache_new(64u << 20);
    struct view_index index;
    view_index_build_keeping_text(NULL, &view, cache, 3 * LIMIT_CHECKPOINT_SPACING + 100, &index);
    g_assert_cmpuint(index.text_blocks, >=, 2);
    g_assert_cmpuint(index.text_blocks, <=, 3);
    cat_equals(&view, &index, full);
    random_reads_equal(&view, &index, full);
    view_index_clear(&index);
    chunk_cache_free(cache);
    g_string_free(full, TRUE);
}

/* Reads that lend kept blocks instead of copying them: the bytes the iovecs
 * give (the lent pieces and the buffer between them) equal the full render,
 * nothing of a lent piece is written to the buffer, a read over more blocks
 * than VIEW_LENT_PIECES copies the rest, and releasing gives every pin back. */
static size_t gather_lent(const struct view_lent *lent, const char *buf, size_t n, char *out)
{
    struct iovec iov[2 * VIEW_LENT_PIECES + 1];
    unsigned count = view_lent_iov(lent, buf, n, iov);
    size_t at = 0;
    for (unsigned i = 0; i < count; i++) {
        memcpy(out + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    return at;
}

static void lent_reads_equal(uint64_t keep)
{
    struct view view = { .ops = &counted_ops, .arg = { 20000 } };
    GString *full = render_lines(&view);
    struct chunk_cache *cache = chunk_cache_new(64u << 20);
    struct view_index index;
    view_index_build_keeping_text(NULL, &view, cache, keep, &index);
    g_assert_cmpuint(index.text_blocks, >=, 2);
    size_t max = (VIEW_LENT_PIECES + 4) * LIMIT_CHECKPOINT_SPACING;
    char *buf = g_malloc(max), *out = g_malloc(max);
    unsigned lent_pieces = 0;
    GRand *rand = g_rand_new_with_seed(7);
    for (int round = 0; round < 200; round++) {
        /* Round 0: the whole view's first blocks, more than can be lent. */
        uint64_t offset = round == 0 ? 0 : (uint64_t)g_rand_int_range(rand, 0, (gint32)index.size);
        size_t len = round == 0 ? max : (size_t)g_rand_int_range(rand, 1, 3 * LIMIT_CHECKPOINT_SPACING);
        memset(buf, '#', max);
        struct view_lent lent = { 0 };
        ssize_t n = view_read_lent(NULL, &view, &index, offset, buf, len, &lent);
        g_assert_cmpint(n, ==, (ssize_t)MIN((uint64_t)len, index.size - offset));
        if (round == 0)
            g_assert_cmpuint(lent.count, ==, MIN(index.text_blocks, VIEW_LENT_PIECES));
        for (unsigned i = 0; i < lent.count; i++)
            g_assert_cmpint(buf[lent.piece[i].at], ==, '#');
        g_assert_cmpuint(gather_lent(&lent, buf, (size_t)n, out), ==, (size_t)n);
        g_assert_true(memcmp(out, full->str + offset, (size_t)n) == 0);
        lent_pieces += lent.count;
        view_lent_release(&lent);
        g_assert_cmpuint(lent.count, ==, 0);
    }
    g_assert_cmpuint(lent_pieces, >, 0);
    g_rand_free(rand);
    g_free(buf);
    g_free(out);
    free_kept_text(&index, cache, full);
}

static void test_kept_text_lent(void)
{
    lent_reads_equal(3 * LIMIT_CHECKPOINT_SPACING + 100);   /* lent, then rendered into the buffer */
    lent_reads_equal(16u << 20);                             /* every block kept */
}

/* A cache smaller than the kept text: evicted blocks are rendered again,
 * byte for byte. */
static void test_kept_text_evicted(void)
{
    struct view view = { .ops = &counted_ops, .arg = { 20000 } };
    GString *full = render_lines(&view);
    struct chunk_cache *cache = chunk_cache_new(3 * LIMIT_CHECKPOINT_SPACING);
    struct view_index index;
    view_index_build_keeping_text(NULL, &view, cache, 16u << 20, &index);
    g_assert_cmpuint(index.text_blocks, ==, index.checkpoint_count);
    random_reads_equal(&view, &index, full);
    cat_equals(&view, &index, full);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.evictions, >, 0);
    /* The budget and one block, each held in a buffer up to an eighth
     * larger than the block (chunk_cache.c recycles buffers). */
    g_assert_cmpuint(stats.peak_bytes_held, <=, 4 * LIMIT_CHECKPOINT_SPACING * 9 / 8);
    view_index_clear(&index);
    chunk_cache_free(cache);
    g_string_free(full, TRUE);
}

/* The read-ahead tests' views render at memory speed, which makes the
 * workers' read-ahead not worth its hand-off (view.c): they are made to
 * look as costly per byte as rr's events. */
static void renders_costly(struct view_index *index)
{
    index->rendered_bytes = 0;
    index->rendered_cpu_ns = UINT64_MAX / 4;
}

/* A view that renders cheaply, as its sizing measured, is read by the
 * reader's own thread: nothing is rendered ahead into the text cache, and
 * the bytes are the view's; made to look costly, the same reads are read
 * ahead. */
static void test_cheap_view_is_not_read_ahead(void)
{
    for (int costly = 0; costly < 2; costly++) {
        struct trace *trace = worker_trace(2);
        trace->options.shared_workers = trace->workers;
        trace->text_cache = chunk_cache_new(64u << 20);
        struct view view = { .ops = &lines_ops, .context = trace, .arg = { 200000 } };
        GString *full = render_lines(&view);
        struct view_index index;
        view_index_build(trace, &view, &index);
        g_assert_cmpuint(index.rendered_bytes, ==, index.size);
        g_assert_cmpuint(index.size, >, 4u << 20);
        if (costly)
            renders_costly(&index);
        trace_cat_equals(trace, &view, &index, full);
        struct chunk_cache_stats stats;
        chunk_cache_get_stats(trace->text_cache, &stats);
        if (costly)
            g_assert_cmpuint(stats.misses, >, 0);
        else
            g_assert_cmpuint(stats.misses, ==, 0);
        struct chunk_cache *text_cache = trace->text_cache;
        worker_trace_free(trace);
        view_index_clear(&index);
        chunk_cache_free(text_cache);
        g_string_free(full, TRUE);
    }
}

/* A view whose blocks are a megabyte and more (its checkpoints thinned
 * within a small budget, as XRay's events.yaml is): a sequential reader's
 * first read has the workers render two blocks each ahead of it, not the
 * one block that READAHEAD_BYTES_PER_WORKER alone would give. */
static void test_read_ahead_window_of_big_blocks(void)
{
    const unsigned threads = 2;
    struct trace *trace = worker_trace(threads);
    trace->options.shared_workers = trace->workers;   /* no loader threads: nothing to load */
    trace->text_cache = chunk_cache_new(64u << 20);
    trace->view_checkpoint_bytes = 7 * sizeof(struct view_checkpoint);
    struct view view = { .ops = &lines_ops, .context = trace, .arg = { 40000 } };
    GString *full = render_lines(&view);
    struct view_index index;
    view_index_build(trace, &view, &index);
    renders_costly(&index);
    g_assert_cmpuint(index.size, ==, full->len);
    uint64_t block = index.size / index.checkpoint_count;
    g_assert_cmpuint(block, >, 1u << 20);
    g_assert_cmpuint(block, <=, VIEW_KEPT_BLOCK_MAX_BYTES);

    char buf[4096];
    g_assert_cmpint(view_read(trace, &view, &index, 0, buf, sizeof buf), ==, (ssize_t)sizeof buf);
    g_assert_true(memcmp(buf, full->str, sizeof buf) == 0);
    /* The reader's block and the window's, rendered on the workers. */
    uint64_t wanted = MIN(1 + 2 * threads, (uint64_t)index.checkpoint_count);
    struct chunk_cache_stats stats;
    for (int waited = 0; waited < 1000; waited++) {
        chunk_cache_get_stats(trace->text_cache, &stats);
        if (stats.misses >= wanted && stats.chunks_held >= wanted)
            break;
        g_usleep(10000);
    }
    g_assert_cmpuint(stats.misses, >=, wanted);
    g_assert_cmpuint(stats.chunks_held, >=, wanted);
    cat_equals(&view, &index, full);
    struct chunk_cache *text_cache = trace->text_cache;
    worker_trace_free(trace);
    view_index_clear(&index);
    chunk_cache_free(text_cache);
    g_string_free(full, TRUE);
}

/* A sequential reader of a view through FUSE: 1 MiB requests whose
 * blocks are lent to the reply and released after the next request. */
struct lent_reader {
    const struct view *view;
    struct view_index index;
    const GString *full;
    uint64_t offset;
    char *buf[2], *out;
    struct view_lent lent[2];
    unsigned turn;
};

static gboolean lent_reader_step(struct trace *trace, struct lent_reader *reader)
{
    const size_t request = 1u << 20;
    if (reader->offset >= reader->index.size)
        return FALSE;
    unsigned k = reader->turn ^= 1;
    view_lent_release(&reader->lent[k]);         /* the reply before the last one */
    ssize_t n = view_read_lent(trace, reader->view, &reader->index, reader->offset, reader->buf[k], request,
                               &reader->lent[k]);
    g_assert_cmpint(n, >, 0);
    g_assert_cmpuint(gather_lent(&reader->lent[k], reader->buf[k], (size_t)n, reader->out), ==, (size_t)n);
    g_assert_true(memcmp(reader->out, reader->full->str + reader->offset, (size_t)n) == 0);
    reader->offset += (uint64_t)n;
    return TRUE;
}

/* Two `cat`s of two files at once, with 8 workers: each reader's window
 * ahead takes a third of the text cache.  With plain LRU the blocks each
 * reader had copied were newer than the unread ones ahead of it and stayed,
 * so the unread ones were evicted and rendered again; released spent, the
 * copied blocks go first and each block is rendered about once. */
static void test_read_ahead_renders_each_block_once(void)
{
    const unsigned threads = 8;
    struct trace *trace = worker_trace(threads);
    trace->options.shared_workers = trace->workers;   /* no loader threads: nothing to load */
    trace->text_cache = chunk_cache_new(24u << 20);
    struct view views[2] = { { .ops = &lines_ops, .context = trace, .arg = { 150000 } },
                             { .ops = &lines_ops, .context = trace, .arg = { 120000 } } };
    struct lent_reader readers[2];
    GString *full[2];
    uint64_t blocks = 0;
    for (unsigned r = 0; r < 2; r++) {
        full[r] = render_lines(&views[r]);
        readers[r] = (struct lent_reader){ .view = &views[r], .full = full[r], .out = g_malloc(1u << 20),
                                           .buf = { g_malloc(1u << 20), g_malloc(1u << 20) } };
        view_index_build(trace, &views[r], &readers[r].index);
        renders_costly(&readers[r].index);
        blocks += readers[r].index.checkpoint_count;
    }
    struct chunk_cache_stats before, after;
    chunk_cache_get_stats(trace->text_cache, &before);
    while (lent_reader_step(trace, &readers[0]) | lent_reader_step(trace, &readers[1]))
        continue;
    chunk_cache_get_stats(trace->text_cache, &after);
    uint64_t renders = after.misses - before.misses;
    g_test_message("%" G_GUINT64_FORMAT " renders for %" G_GUINT64_FORMAT " blocks", renders, blocks);
    g_assert_cmpuint(renders, <=, blocks + blocks / 20);
    for (unsigned r = 0; r < 2; r++) {
        view_lent_release(&readers[r].lent[0]);
        view_lent_release(&readers[r].lent[1]);
        g_free(readers[r].buf[0]);
        g_free(readers[r].buf[1]);
        g_free(readers[r].out);
        view_index_clear(&readers[r].index);
        g_string_free(full[r], TRUE);
    }
    struct chunk_cache *text_cache = trace->text_cache;
    worker_trace_free(trace);
    chunk_cache_free(text_cache);
}

/* An evicted block whose view now renders differently (the trace changed
 * under the mount) is an error, not other bytes served as the old ones. */
static void test_kept_text_changed_is_an_error(void)
{
    struct view view = { .ops = &counted_ops, .arg = { 20000 } };
    struct chunk_cache *cache = chunk_cache_new(64u << 20);
    struct view_index index;
    view_index_build_keeping_text(NULL, &view, cache, 16u << 20, &index);
    g_assert_cmpuint(index.text_blocks, >, 3);
    chunk_cache_forget_owner(cache, index.text_owner);
    struct view shorter = { .ops = &counted_ops, .arg = { 10 } };
    char buf[100];
    g_assert_cmpint(view_read(NULL, &shorter, &index, index.checkpoints[2].offset + 5, buf, sizeof buf), ==, -EIO);
    view_index_clear(&index);
    chunk_cache_free(cache);
}

/* A file of `size` bytes with a recognisable pattern, and that pattern. */
static char *make_pattern(size_t size)
{
    char *data = g_malloc(size);
    for (size_t i = 0; i < size; i++)
        data[i] = (char)((i * 31 + (i >> 11)) & 0xff);
    return data;
}

static void check_stream_against(struct stream *stream, const char *expect, size_t size)
{
    g_assert_cmpuint(stream_size(stream), ==, size);
    char *buf = g_malloc(size + 1);
    for (int round = 0; round < 300; round++) {
        uint64_t offset = (uint64_t)g_random_int_range(0, (gint32)size);
        size_t len = (size_t)g_random_int_range(0, (gint32)(size - offset + 1));
        g_assert_cmpint(stream_read(stream, offset, buf, len), ==, (ssize_t)len);
        g_assert_true(memcmp(buf, expect + offset, len) == 0);
    }
    g_assert_cmpint(stream_read(stream, size, buf, 10), ==, 0);
    g_assert_cmpint(stream_read_exact(stream, size - 5, buf, 10), ==, -ENODATA);
    struct stream_cursor cursor;
    stream_cursor_init(&cursor, stream, 0);
    for (size_t offset = 0; offset < size; offset += 777) {
        size_t len = MIN((size_t)777, size - offset);
        g_assert_cmpint(stream_cursor_read(&cursor, buf, len), ==, 0);
        g_assert_true(memcmp(buf, expect + offset, len) == 0);
    }
    g_assert_cmpint(stream_cursor_read(&cursor, buf, 1), ==, -ENODATA);
    stream_cursor_finish(&cursor);
    g_free(buf);
}

typedef size_t (*compress_fn)(const char *in, size_t in_size, char *out, size_t out_capacity);

static size_t compress_snappy(const char *in, size_t in_size, char *out, size_t out_capacity)
{
    size_t n = out_capacity;
    g_assert_cmpint(snappy_compress(in, in_size, out, &n), ==, SNAPPY_OK);
    return n;
}

static size_t compress_zstd(const char *in, size_t in_size, char *out, size_t out_capacity)
{
    size_t n = ZSTD_compress(out, out_capacity, in, in_size, 3);
    g_assert_false(ZSTD_isError(n));
    return n;
}

/* Writes the pattern as compressed chunks of chunk_size and reads it back. */
static void check_chunked(enum codec codec, compress_fn compress)
{
    const size_t size = 300000, chunk_size = 65536;
    char *data = make_pattern(size);
    char path[] = "/tmp/tracefs-test-XXXXXX";
    int fd = g_mkstemp(path);
    size_t chunk_count = (size + chunk_size - 1) / chunk_size;
    struct chunk_entry *chunks = g_new0(struct chunk_entry, chunk_count);
    char *out = g_malloc(2 * chunk_size + 1024);
    uint64_t file_offset = 0;
    for (size_t i = 0; i < chunk_count; i++) {
        size_t in_size = MIN(chunk_size, size - i * chunk_size);
        size_t n = compress(data + i * chunk_size, in_size, out, 2 * chunk_size + 1024);
        g_assert_cmpint(write(fd, out, n), ==, (ssize_t)n);
        chunks[i] = (struct chunk_entry){ .file_offset = file_offset, .stream_offset = i * chunk_size,
                                          .compressed_size = (uint32_t)n, .size = (uint32_t)in_size };
        file_offset += n;
    }
    struct chunk_cache *cache = chunk_cache_new(2 * chunk_size);
    struct stream *stream = stream_new_chunked(cache, "test", fd, codec, chunks, chunk_count);
    check_stream_against(stream, data, size);
    stream_free(stream);
    chunk_cache_free(cache);
    close(fd);
    g_unlink(path);
    g_free(out);
    g_free(data);
}

static void test_snappy_stream(void) { check_chunked(CODEC_SNAPPY, compress_snappy); }
static void test_zstd_stream(void) { check_chunked(CODEC_ZSTD, compress_zstd); }

static void test_plain_file_stream(void)
{
    const size_t size = 3 * 1024 * 1024 + 12345;
    char *data = make_pattern(size);
    char path[] = "/tmp/tracefs-test-XXXXXX";
    int fd = g_mkstemp(path);
    g_assert_cmpint(write(fd, data, size), ==, (ssize_t)size);
    struct chunk_cache *cache = chunk_cache_new(1 << 20);
    struct stream *stream = stream_new_file(cache, "file", fd, size);
    check_stream_against(stream, data, size);
    /* The file shrinks under us: a read past the new end fails, never
     * returns stale or made-up bytes. */
    g_assert_cmpint(ftruncate(fd, 100), ==, 0);
    char buf[16];
    stream_free(stream);
    stream = stream_new_file(cache, "file", fd, size);
    g_assert_cmpint(stream_read(stream, 2 * 1024 * 1024, buf, sizeof buf), <, 0);
    stream_free(stream);
    chunk_cache_free(cache);
    close(fd);
    g_unlink(path);
    g_free(data);
}

/* Inside a hold, a thread's cursors on one chunk share a pin without
 * asking the cache again; the hold's end gives every pin back, so the
 * chunks can be evicted. */
static void test_hold_keeps_pins_until_its_end(void)
{
    const size_t size = 3 * 1024 * 1024;
    char *data = make_pattern(size);
    char path[] = "/tmp/tracefs-test-XXXXXX";
    int fd = g_mkstemp(path);
    g_assert_cmpint(write(fd, data, size), ==, (ssize_t)size);
    struct chunk_cache *cache = chunk_cache_new(1 << 20);
    struct stream *stream = stream_new_file(cache, "file", fd, size);
    struct chunk_cache_stats before, after;
    chunk_cache_get_stats(cache, &before);
    stream_hold_begin();
    for (uint64_t record = 0; record < 100; record++) {
        struct stream_cursor cursor;
        char buf[64];
        uint64_t offset = (record % 2 ? 2 * LIMIT_PLAIN_CHUNK_BYTES : 0) + record * 64;
        stream_cursor_init(&cursor, stream, offset);
        g_assert_cmpint(stream_cursor_read(&cursor, buf, sizeof buf), ==, 0);
        g_assert_cmpmem(buf, sizeof buf, data + offset, sizeof buf);
        stream_cursor_finish(&cursor);
    }
    chunk_cache_get_stats(cache, &after);
    g_assert_cmpuint(after.hits + after.misses - before.hits - before.misses, ==, 2);
    stream_hold_end();
    /* Nothing stays pinned: reading the rest evicts both chunks. */
    char *copy = g_malloc(size);
    g_assert_cmpint(stream_read(stream, 0, copy, size), ==, (ssize_t)size);
    chunk_cache_get_stats(cache, &after);
    g_assert_cmpuint(after.bytes_held, <=, 1 << 20);
    g_free(copy);
    stream_free(stream);
    chunk_cache_free(cache);
    close(fd);
    g_unlink(path);
    g_free(data);
}

static void test_corrupt_chunk_is_an_error(void)
{
    char path[] = "/tmp/tracefs-test-XXXXXX";
    int fd = g_mkstemp(path);
    g_assert_cmpint(write(fd, "this is not snappy data at all", 30), ==, 30);
    struct chunk_entry *chunks = g_new0(struct chunk_entry, 1);
    chunks[0] = (struct chunk_entry){ .compressed_size = 30, .size = 1000 };
    struct chunk_cache *cache = chunk_cache_new(1 << 20);
    struct stream *stream = stream_new_chunked(cache, "bad", fd, CODEC_SNAPPY, chunks, 1);
    char buf[10];
    g_assert_cmpint(stream_read(stream, 0, buf, sizeof buf), ==, -EIO);
    stream_free(stream);
    chunk_cache_free(cache);
    close(fd);
    g_unlink(path);
}

/* A view whose checkpoints would cost more than the trace allows one view
 * keeps fewer, spaced wider: within the budget, the same for any thread
 * count, and every byte range still equals the full render (kept text
 * too, which the thinning renumbers). */
static void test_checkpoints_thinned_within_budget(void)
{
    const uint64_t cuts[] = { 0, 20000 };     /* one segment; five */
    for (unsigned c = 0; c < G_N_ELEMENTS(cuts); c++) {
        struct view_checkpoint *reference = NULL;
        uint32_t reference_count = 0;
        GString *full = NULL;
        const unsigned threads[] = { 1, 2, 7 };
        for (unsigned t = 0; t < G_N_ELEMENTS(threads); t++) {
            struct trace *trace = worker_trace(threads[t]);
            trace->view_checkpoint_bytes = 64 * sizeof(struct view_checkpoint);
            struct view view = { .ops = cuts[c] ? &segmented_ops : &lines_ops, .context = trace,
                                 .arg = { 100000, cuts[c], 0 } };
            if (!full) {
                full = g_string_new(NULL);
                g_assert_cmpint(view_render_all(NULL, &view, full), ==, 0);
                /* Unthinned, it would take more than three times the budget. */
                g_assert_cmpuint(full->len / LIMIT_CHECKPOINT_SPACING, >, 3 * 64);
            }
            struct chunk_cache *cache = chunk_cache_new(8 * LIMIT_CHECKPOINT_SPACING);
            struct view_index index;
            view_index_build_keeping_text(trace, &view, cache, 8 * LIMIT_CHECKPOINT_SPACING, &index);
            g_assert_cmpuint(index.size, ==, full->len);
            g_assert_cmpuint(index.checkpoint_count, <=, 64);
            g_assert_cmpuint(index.checkpoint_count, >=, 16);
            cat_equals(&view, &index, full);
            random_reads_equal(&view, &index, full);
            if (t == 0) {
                reference_count = index.checkpoint_count;
                reference = g_memdup2(index.checkpoints, index.checkpoint_count * sizeof *index.checkpoints);
            } else {
                g_assert_cmpuint(index.checkpoint_count, ==, reference_count);
                g_assert_true(memcmp(index.checkpoints, reference, reference_count * sizeof *reference) == 0);
            }
            view_index_clear(&index);
            chunk_cache_free(cache);
            worker_trace_free(trace);
        }
        g_free(reference);
        g_string_free(full, TRUE);
    }
}

/* Candidates 0..99 whose cut is word[0] = marks[i]; a mark of 0 is refused. */
static gboolean mark_cut(const void *context, uint64_t i, struct view_cursor *cursor)
{
    const uint64_t *marks = context;
    if (marks[i] == 0)
        return FALSE;
    cursor->word[0] = marks[i];
    cursor->word[1] = i;
    return TRUE;
}

/* view_segment_cuts: evenly strided candidates, the refused ones and those
 * whose word[0] does not rise passed over, at most max, none for a view
 * too small to cut. */
static void test_segment_cuts(void)
{
    uint64_t marks[100];
    for (unsigned i = 0; i < 100; i++)
        marks[i] = 10 * i;
    marks[20] = 0;     /* refused */
    marks[30] = 50;    /* below the previous cut's 100: dropped */
    struct view_cursor cursors[16];
    uint64_t records = 10 * (uint64_t)LIMIT_SEGMENT_MIN_RECORDS;
    uint32_t n = view_segment_cuts(records, 100, 15, mark_cut, marks, cursors);
    /* 10 segments wanted: candidates 10, 20 ... 90, less 20 and 30. */
    g_assert_cmpuint(n, ==, 7);
    g_assert_cmpuint(cursors[0].word[0], ==, 100);
    g_assert_cmpuint(cursors[1].word[0], ==, 400);
    g_assert_cmpuint(cursors[1].word[1], ==, 40);
    g_assert_cmpuint(cursors[1].word[2], ==, 0);
    g_assert_cmpuint(cursors[6].word[0], ==, 900);
    g_assert_cmpuint(view_segment_cuts(records, 100, 3, mark_cut, marks, cursors), ==, 3);
    g_assert_cmpuint(view_segment_cuts(LIMIT_SEGMENT_MIN_RECORDS, 100, 15, mark_cut, marks, cursors), ==, 0);
    g_assert_cmpuint(view_segment_cuts(records, 1, 15, mark_cut, marks, cursors), ==, 0);
}

/* One read's answer: its bytes, or the error. */
struct read_answer {
    ssize_t n;
    char *bytes;
};

static struct read_answer read_range(const struct view *view, const struct view_index *index, uint64_t offset,
                                     size_t len)
{
    struct read_answer answer = { 0, g_malloc(len) };
    answer.n = view_read(NULL, view, index, offset, answer.bytes, len);
    return answer;
}

/* A checkpoint whose cursor is not where the view's text puts it, as a
 * saved index that passed its checksum could hold: every read of a range
 * gets the same answer (bytes or error) whether it comes in a sequential
 * `cat` of small reads or alone, in reverse order. */
static void test_checkpoint_that_disagrees(void)
{
    struct view view = { .ops = &lines_ops, .arg = { 20000 } };
    struct view_index index;
    view_index_build(NULL, &view, &index);
    g_assert_cmpuint(index.checkpoint_count, >, 8);
    uint32_t k = index.checkpoint_count / 2;
    index.checkpoints[k].cursor.word[0] += 1;
    const size_t step = 4096;
    uint64_t reads = (index.size + step - 1) / step;
    struct read_answer *sequential = g_new(struct read_answer, reads);
    for (uint64_t i = 0; i < reads; i++)
        sequential[i] = read_range(&view, &index, i * step, step);
    gboolean some_error = FALSE;
    for (uint64_t i = reads; i-- > 0;) {
        index.resume = (struct view_checkpoint){ 0, { { 0 } } };
        struct read_answer alone = read_range(&view, &index, i * step, step);
        g_assert_cmpint(alone.n, ==, sequential[i].n);
        if (alone.n > 0)
            g_assert_true(memcmp(alone.bytes, sequential[i].bytes, (size_t)alone.n) == 0);
        some_error |= alone.n < 0;
        g_free(alone.bytes);
        g_free(sequential[i].bytes);
    }
    /* The moved cursor shifts the block's records: one crosses the next
     * checkpoint, which no read may serve. */
    g_assert_true(some_error);
    g_free(sequential);
    view_index_clear(&index);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/view/segment_cuts", test_segment_cuts);
    g_test_add_func("/view/random_ranges_equal_full_render", test_random_ranges_equal_full_render);
    g_test_add_func("/view/empty", test_empty_view);
    g_test_add_func("/view/big_record_rendered_once", test_big_record_rendered_once);
    g_test_add_func("/view/big_records_parallel_readers", test_big_records_parallel_readers);
    g_test_add_func("/view/kept_record_is_charged", test_kept_record_is_charged);
    g_test_add_func("/view/kept_text_read_without_rendering", test_kept_text_read_without_rendering);
    g_test_add_func("/view/kept_text_partly", test_kept_text_partly);
    g_test_add_func("/view/kept_text_lent", test_kept_text_lent);
    g_test_add_func("/view/small_sequential_reads_render_each_line_once",
                    test_small_sequential_reads_render_each_line_once);
    g_test_add_func("/view/kept_text_of_parallel_segments", test_kept_text_of_parallel_segments);
    g_test_add_func("/view/kept_text_evicted", test_kept_text_evicted);
    g_test_add_func("/view/cheap_view_is_not_read_ahead", test_cheap_view_is_not_read_ahead);
    g_test_add_func("/view/read_ahead_window_of_big_blocks", test_read_ahead_window_of_big_blocks);
    g_test_add_func("/view/read_ahead_renders_each_block_once", test_read_ahead_renders_each_block_once);
    g_test_add_func("/view/kept_text_changed_is_an_error", test_kept_text_changed_is_an_error);
    g_test_add_func("/view/parallel_sizing_is_identical", test_parallel_sizing_is_identical);
    g_test_add_func("/view/checkpoints_thinned_within_budget", test_checkpoints_thinned_within_budget);
    g_test_add_func("/view/checkpoint_that_disagrees", test_checkpoint_that_disagrees);
    g_test_add_func("/workers/each_item_once", test_workers_run_each_item_once);
    g_test_add_func("/stream/plain_file", test_plain_file_stream);
    g_test_add_func("/stream/snappy", test_snappy_stream);
    g_test_add_func("/stream/zstd", test_zstd_stream);
    g_test_add_func("/stream/corrupt_chunk", test_corrupt_chunk_is_an_error);
    g_test_add_func("/stream/hold_keeps_pins_until_its_end", test_hold_keeps_pins_until_its_end);
    return g_test_run();
}
