/* Writes the common files of the synthetic trace into a directory, through
 * the view engine (sized, checkpointed, read back), for
 * check_event_exports.py to check with python's json, jq and protoc:
 *   events.jsonl  chrome.json  trace.perfetto-trace  threads/<pid>_<tid>.jsonl
 * Usage: event_exports_sample DIR [EVENTS [SEED]]; prints the event count. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "synthetic_events.h"
#include "trace.h"

static void write_view(struct trace *trace, const struct view_ops *ops, const uint64_t arg[3], const char *dir,
                       const char *name)
{
    struct view view = { .ops = ops, .context = trace, .arg = { arg[0], arg[1], arg[2] } };
    GString *text = g_string_new(NULL);
    if (view_render_all(trace, &view, text) != 0) {
        fprintf(stderr, "rendering %s failed\n", name);
        exit(1);
    }
    char *path = g_build_filename(dir, name, NULL);
    GError *error = NULL;
    if (!g_file_set_contents(path, text->str, (gssize)text->len, &error)) {
        fprintf(stderr, "%s\n", error->message);
        exit(1);
    }
    g_free(path);
    g_string_free(text, TRUE);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [EVENTS [SEED]]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    uint32_t count = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 6000;
    uint32_t seed = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 24;
    struct synthetic_trace *events = synthetic_trace_new(count, seed);
    struct trace trace;
    memset(&trace, 0, sizeof trace);
    trace.format_state = events;

    char *threads = g_build_filename(dir, "threads", NULL);
    if (g_mkdir_with_parents(threads, 0755) != 0) {
        fprintf(stderr, "%s: %s\n", threads, g_strerror(errno));
        return 1;
    }
    const uint64_t all[3] = { 0, 0, 0 };
    write_view(&trace, &synthetic_jsonl_ops, all, dir, "events.jsonl");
    write_view(&trace, &synthetic_chrome_ops, all, dir, "chrome.json");
    write_view(&trace, &synthetic_perfetto_ops, all, dir, "trace.perfetto-trace");

    /* One file per (pid, tid) met. */
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < events->events->len; i++) {
        const struct synthetic_event *e = &g_array_index(events->events, struct synthetic_event, i);
        char *name = g_strdup_printf("threads/%" G_GINT64_FORMAT "_%" G_GINT64_FORMAT ".jsonl", e->base.pid,
                                     e->base.tid);
        if (g_hash_table_contains(seen, name)) {
            g_free(name);
            continue;
        }
        const uint64_t one[3] = { 1, (uint64_t)e->base.pid, (uint64_t)e->base.tid };
        write_view(&trace, &synthetic_jsonl_ops, one, dir, name);
        g_hash_table_add(seen, name);
    }
    g_hash_table_destroy(seen);
    g_free(threads);
    printf("%u\n", events->events->len);
    synthetic_trace_free(events);
    return 0;
}
