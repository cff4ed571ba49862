/* export/chrome.json: every frame as an instant event on its thread's
 * track (Chrome Trace Event format, for Perfetto / chrome://tracing). */
#include <string.h>

#include "rr.h"
#include "text.h"
#include "trace.h"
#include "tree.h"

/* cursor word[0]: 0 = the opening bracket, k = frame k, frames + 1 = end;
 * word[1], word[2]: frame k's events and data offsets. */
static void export_begin(const struct view *view, struct view_cursor *cursor)
{
    (void)view;
    memset(cursor, 0, sizeof *cursor);
}

static enum view_step export_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    struct rr_state *state = view->context;
    uint64_t k = cursor->word[0];
    if (k == 0) {
        g_string_append(out, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [");
        cursor->word[0]++;
        return VIEW_RECORD;
    }
    if (k > state->frame_count + 1)
        return VIEW_END;
    if (k == state->frame_count + 1) {
        g_string_append(out, "\n]}\n");
        cursor->word[0]++;
        return VIEW_RECORD;
    }
    struct rr_frame f;
    const char *why = NULL;
    struct rr_frame_pos pos = { k - 1, cursor->word[1], cursor->word[2] };
    if (rr_frame_read(state, &pos, &f, &why) < 0) {
        trace_error(state->trace, "events", 0, "frame %" G_GUINT64_FORMAT ": %s", k, why ? why : "unreadable");
        rr_frame_release(&f);
        return VIEW_ERROR;
    }
    GString *name = g_string_new(NULL);
    rr_dump_event_name(&f, name);
    if (f.event == RR_EV_SYSCALL)
        g_string_append(name, f.sys_state == 2 ? " (exit)" : " (enter)");
    int32_t pid = f.tid;
    gpointer found;
    if (state->pid_of && g_hash_table_lookup_extended(state->pid_of, GINT_TO_POINTER(f.tid), NULL, &found))
        pid = GPOINTER_TO_INT(found);
    g_string_append(out, k > 1 ? ",\n{\"name\": " : "\n{\"name\": ");
    text_json_cstring(out, name->str);
    g_string_append(out, ", \"ph\": \"i\", \"s\": \"t\", \"ts\": ");
    text_json_double(out, f.monotonic_sec * 1e6);
    g_string_append_printf(out, ", \"pid\": %d, \"tid\": %d, \"args\": {\"global_time\": %" G_GUINT64_FORMAT
                           ", \"ticks\": %" G_GINT64_FORMAT "}}", pid, f.tid, k, f.ticks);
    g_string_free(name, TRUE);
    rr_frame_release(&f);
    cursor->word[0]++;
    cursor->word[1] = pos.offset;
    cursor->word[2] = pos.data_offset;
    return VIEW_RECORD;
}

static const struct view_ops export_ops = { .begin = export_begin, .next = export_next };

void rr_add_export(struct rr_state *state)
{
    node_id dir = tree_dir(state->trace->tree, TREE_ROOT, "export");
    struct view view = { .ops = &export_ops, .context = state };
    tree_add_view(state->trace->tree, dir, "chrome.json", &view);
}
