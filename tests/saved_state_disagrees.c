/* A saved index that passed its checksum yet disagrees with the trace (its
 * checkpoints hold other positions than the index pass would have found)
 * gives every reader the same answer: a `cat` in small reads and the same
 * reads alone, in reverse order, get the same bytes or the same error, with
 * one, two or three threads.
 *
 * XRay: every global and per-thread checkpoint after the first has each
 * run's TSC base moved and one record fewer left in it, so a merge started
 * there gives other records than one that went on from the record before.
 * apitrace: every checkpoint after the first numbers the calls after it
 * one higher, so a walk from it gives other call numbers than one that
 * went on from the call before. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "format.h"
#include "fuzz_driver.h"
#include "index_file.h"
#include "saved_bytes.h"
#include "trace.h"
#include "tree.h"
#ifdef TRACEFS_FORMAT_XRAY
#include "xray_format.h"
#endif
#ifdef TRACEFS_FORMAT_APITRACE
#include "apitrace.h"
#endif

#define SAMPLE(path) TRACEFS_SOURCE_ROOT "/tests/data/" path
#define READ_BYTES 4096u

static char *index_dir;

static struct trace *open_sample(const char *format, const char *path, gboolean from_saved, unsigned threads)
{
    struct trace_options options = { .format_name = format, .index_dir = index_dir, .cache_bytes = 4u << 20,
                                     .threads = threads, .no_index = !from_saved,
                                     .require_saved_index = from_saved };
    char *message = NULL;
    struct trace *trace = trace_open(path, &options, &message);
    g_free(message);
    return trace;
}

/* Writes the sample's saved index with its checkpoints moved by `breaker`. */
static void save_disagreeing_index(const char *format, const char *path, void (*breaker)(struct trace *))
{
    struct trace *trace = open_sample(format, path, FALSE, 1);
    g_assert_nonnull(trace);
    breaker(trace);
    struct saved_writer *writer = saved_writer_new();
    g_assert_cmpint(trace->format->save(trace, writer), ==, 0);
    GByteArray *state = saved_writer_join(writer);
    saved_writer_free(writer);
    GByteArray *file = g_byte_array_new();
    index_file_encode_state(trace, state->data, state->len, file);
    char *index = index_file_path(trace);
    g_assert_true(g_file_set_contents(index, (const char *)file->data, file->len, NULL));
    g_chmod(index, 0600);
    g_free(index);
    g_byte_array_free(file, TRUE);
    g_byte_array_free(state, TRUE);
    trace_close(trace);
}

struct answer {
    ssize_t n;
    char bytes[READ_BYTES];
};

/* The file at `path` read in READ_BYTES steps from the start, then each
 * step again alone from the last: every answer must repeat.  Returns the
 * answers in order (each one's length or error, then its bytes). */
static GString *reads_agree(struct trace *trace, const char *path)
{
    struct tree_entry_info entry;
    g_assert_true(tree_resolve(trace->tree, path, &entry));
    uint64_t size = 0;
    g_assert_cmpint(tree_file_size(trace, entry.ino, &size), ==, 0);
    uint64_t reads = (size + READ_BYTES - 1) / READ_BYTES;
    g_assert_cmpuint(reads, >, 1);
    struct answer *sequential = g_new(struct answer, reads);
    for (uint64_t i = 0; i < reads; i++)
        sequential[i].n = tree_file_read(trace, entry.ino, i * READ_BYTES, sequential[i].bytes, READ_BYTES);
    struct answer alone;
    for (uint64_t i = reads; i-- > 0;) {
        alone.n = tree_file_read(trace, entry.ino, i * READ_BYTES, alone.bytes, READ_BYTES);
        if (alone.n != sequential[i].n || (alone.n > 0 && memcmp(alone.bytes, sequential[i].bytes, (size_t)alone.n)))
            g_error("%s: the read at %" G_GUINT64_FORMAT " differs from the sequential pass's", path,
                    i * READ_BYTES);
    }
    GString *answers = g_string_new(NULL);
    for (uint64_t i = 0; i < reads; i++) {
        g_string_append_len(answers, (const char *)&sequential[i].n, sizeof sequential[i].n);
        if (sequential[i].n > 0)
            g_string_append_len(answers, sequential[i].bytes, sequential[i].n);
    }
    g_free(sequential);
    return answers;
}

static gboolean collect_name(void *data, const char *name, const struct tree_entry_info *entry, uint64_t next)
{
    (void)entry;
    (void)next;
    if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
        g_ptr_array_add(data, g_strdup(name));
    return TRUE;
}

static GPtrArray *directory_names(struct trace *trace, const char *dir)
{
    struct tree_entry_info entry;
    g_assert_true(tree_resolve(trace->tree, dir, &entry));
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    tree_readdir(trace->tree, entry.ino, 0, collect_name, names);
    g_ptr_array_sort(names, (GCompareFunc)g_strcmp0);
    return names;
}

struct disagreement {
    const char *format, *path;
    void (*breaker)(struct trace *);
    const char *const *files;            /* top-level files read */
    const char *per_thread;              /* and each thread's, if not NULL */
};

/* The paths of the files the case reads. */
static GPtrArray *case_paths(const struct disagreement *d, struct trace *trace)
{
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *file = d->files; *file; file++)
        g_ptr_array_add(paths, g_strdup_printf("/%s", *file));
    if (d->per_thread) {
        GPtrArray *threads = directory_names(trace, "/threads");
        for (guint i = 0; i < threads->len; i++)
            g_ptr_array_add(paths, g_strdup_printf("/threads/%s/%s", (char *)threads->pdata[i], d->per_thread));
        g_ptr_array_free(threads, TRUE);
    }
    return paths;
}

static void free_string(gpointer string)
{
    g_string_free(string, TRUE);
}

/* Each file's answers with one thread, then the same with two and three
 * (sizing in parallel segments, reading ahead on workers). */
static void test_disagreement(gconstpointer data)
{
    const struct disagreement *d = data;
    if (!format_find(d->format)) {
        g_test_skip("format not built in (-Dformats=)");
        return;
    }
    save_disagreeing_index(d->format, d->path, d->breaker);
    GPtrArray *first = NULL, *paths = NULL;
    for (unsigned threads = 1; threads <= 3; threads++) {
        struct trace *trace = open_sample(d->format, d->path, TRUE, threads);
        g_assert_nonnull(trace);
        if (!paths)
            paths = case_paths(d, trace);
        GPtrArray *answers = g_ptr_array_new_with_free_func(free_string);
        for (guint i = 0; i < paths->len; i++) {
            GString *got = reads_agree(trace, paths->pdata[i]);
            if (first && !g_string_equal(got, first->pdata[i]))
                g_error("%s: threads=%u gives other answers than threads=1", (char *)paths->pdata[i], threads);
            g_ptr_array_add(answers, got);
        }
        trace_close(trace);
        if (first)
            g_ptr_array_free(answers, TRUE);
        else
            first = answers;
    }
    /* The moved checkpoints show somewhere, or the case proves nothing. */
    struct trace *trace = open_sample(d->format, d->path, FALSE, 1);
    g_assert_nonnull(trace);
    gboolean moved = FALSE;
    for (guint i = 0; i < paths->len; i++) {
        GString *unmoved = reads_agree(trace, paths->pdata[i]);
        moved |= !g_string_equal(unmoved, first->pdata[i]);
        g_string_free(unmoved, TRUE);
    }
    trace_close(trace);
    g_assert_true(moved);
    g_ptr_array_free(first, TRUE);
    g_ptr_array_free(paths, TRUE);
}

#ifdef TRACEFS_FORMAT_XRAY
/* A later TSC base, and one record fewer left in the run. */
static void move_position(struct xray_position *p)
{
    p->tsc += 1000;
    if (p->left > 1)
        p->left--;
}

static void move_xray_checkpoints(struct trace *trace)
{
    struct xray_state *s = trace->format_state;
    g_assert_cmpuint(s->checkpoint_ordinals->len, >, 1);
    for (guint k = 1; k < s->checkpoint_ordinals->len; k++) {
        uint32_t *words = &g_array_index(s->checkpoints, uint32_t, (uint64_t)k * s->checkpoint_words);
        for (guint run = 0; run < s->runs->len; run++) {
            struct xray_position p;
            memcpy(&p, words + run * (sizeof p / sizeof *words), sizeof p);
            move_position(&p);
            memcpy(words + run * (sizeof p / sizeof *words), &p, sizeof p);
        }
    }
    for (guint t = 0; t < s->threads->len; t++) {
        const struct xray_thread *thread = &g_array_index(s->threads, struct xray_thread, t);
        if (thread->spacing == 0)
            continue;
        for (uint64_t k = 1; k * thread->spacing < thread->records; k++)
            for (uint32_t run = 0; run < thread->run_count; run++)
                move_position(&g_array_index(s->thread_checkpoints, struct xray_position,
                                             thread->first_checkpoint + k * thread->run_count + run));
    }
}

static const char *const xray_files[] = { "events.yaml", "events.jsonl", NULL };
static const struct disagreement xray_case = { "xray", SAMPLE("xray/threads.fdr-tsc-buf1k.xray"),
                                               move_xray_checkpoints, xray_files, "events" };
#endif

#ifdef TRACEFS_FORMAT_APITRACE
static void move_apitrace_checkpoints(struct trace *trace)
{
    struct at_state *s = trace->format_state;
    g_assert_cmpuint(s->checkpoints->len, >, 2);
    for (guint k = 1; k < s->checkpoints->len; k++)
        g_array_index(s->checkpoints, struct at_checkpoint, k).next_call++;
}

static const char *const apitrace_files[] = { "events", "events.jsonl", NULL };
static const struct disagreement apitrace_case = { "apitrace", SAMPLE("apitrace/glxgears-2s.trace"),
                                                   move_apitrace_checkpoints, apitrace_files, NULL };
#endif

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    index_dir = fuzz_temporary_directory("tracefs-disagrees-XXXXXX");
#ifdef TRACEFS_FORMAT_XRAY
    g_test_add_data_func("/saved_state_disagrees/xray", &xray_case, test_disagreement);
#endif
#ifdef TRACEFS_FORMAT_APITRACE
    g_test_add_data_func("/saved_state_disagrees/apitrace", &apitrace_case, test_disagreement);
#endif
    return g_test_run();
}
