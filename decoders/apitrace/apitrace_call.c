/* Calls: the details of enter/leave events, and a call rendered as
 * `apitrace dump` prints it or as JSON. */
#include <inttypes.h>
#include <string.h>
#include "apitrace.h"
#include "apitrace_details.h"
#include "trace.h"
#include "tracefs_limits.h"

enum {
    DETAIL_END = 0x00, DETAIL_ARG, DETAIL_RET, DETAIL_THREAD, DETAIL_BACKTRACE, DETAIL_FLAGS,
};

static gboolean detail_fail(struct at_details *details, const char *why)
{
    details->why = why;
    return FALSE;
}

static gboolean skip_backtrace(struct at_state *state, struct at_reader *reader, gboolean define)
{
    uint64_t count;
    if (!at_uint(reader, &count) || count > LIMIT_APITRACE_BACKTRACE_FRAMES)
        return FALSE;
    for (uint64_t i = 0; i < count; i++)
        if (!at_frame_sig(state, reader, define))
            return FALSE;
    return TRUE;
}

/* A top-level blob argument: noted for blobs/ during the index pass. */
static gboolean note_blob(struct at_reader *reader, struct at_details *details, int64_t arg)
{
    uint64_t size;
    if (!at_uint(reader, &size) || size > at_bytes_left(reader))
        return FALSE;
    struct at_blob blob = { details->call, at_reader_offset(reader), size, arg };
    g_array_append_val(details->blobs, blob);
    return at_skip(reader, size);
}

static gboolean detail_value(struct at_state *state, struct at_reader *reader, struct at_details *details,
                             int64_t arg, gboolean want_int, uint64_t *start, uint64_t *length)
{
    if (details->blobs && at_peekc(reader) == 0x08) {
        at_getc(reader);
        return note_blob(reader, details, arg) || detail_fail(details, "blob larger than the bytes left");
    }
    struct at_value_ctx ctx = { .state = state, .define = details->define, .style = AT_STYLE_SKIP,
                                .call = details->call, .arg = arg,
                                .last_int = want_int ? &details->ret_int : NULL,
                                .has_int = &details->ret_has_int };
    if (details->scratch) {
        ctx.style = details->style;
        *start = details->scratch->len;
    }
    if (at_value(&ctx, reader, details->scratch, 0)) {
        if (details->scratch)
            *length = details->scratch->len - *start;
        return TRUE;
    }
    return detail_fail(details, ctx.why ? ctx.why : "bad value");
}

gboolean at_call_details(struct at_state *state, struct at_reader *reader, struct at_details *details)
{
    for (;;) {
        int c = at_getc(reader);
        uint64_t number;
        struct at_arg_offset arg;
        switch (c) {
        case DETAIL_END:
            return TRUE;
        case DETAIL_ARG:
            if (!at_uint(reader, &number) || number >= LIMIT_APITRACE_SIG_ENTRIES)
                return detail_fail(details, "bad argument index");
            arg.index = number;
            if (!detail_value(state, reader, details, (int64_t)number, FALSE, &arg.start, &arg.length))
                return FALSE;
            if (details->args)
                at_arg_list_add(details->args, &arg);
            break;
        case DETAIL_RET:
            details->ret_offset = at_reader_offset(reader);
            details->ret_has_int = FALSE;
            if (!detail_value(state, reader, details, -1, TRUE, &details->ret_start, &details->ret_length))
                return FALSE;
            break;
        case DETAIL_THREAD:
            if (!at_uint(reader, &details->thread))
                return detail_fail(details, "bad thread number");
            details->has_thread = TRUE;
            break;
        case DETAIL_BACKTRACE:
            details->backtrace_offset = at_reader_offset(reader);
            if (!skip_backtrace(state, reader, details->define))
                return detail_fail(details, "bad backtrace");
            break;
        case DETAIL_FLAGS:
            if (!at_uint(reader, &number))
                return detail_fail(details, "bad call flags");
            if (number & 1)
                details->fake = TRUE;
            break;
        case -1:
            return detail_fail(details, reader->error ? "stream unreadable" : "call cut off");
        default:
            return detail_fail(details, "unknown call detail");
        }
    }
}

void at_details_init(struct at_details *details, uint64_t call, gboolean define)
{
    *details = (struct at_details){ .call = call, .define = define, .ret_offset = AT_NO_OFFSET,
                                    .backtrace_offset = AT_NO_OFFSET };
}

/* ---- rendering ---- */

/* Reads the call's events into the scratch, rendering their values, as a
 * walk that renders them does (at_walk_enter_details). */
static gboolean read_call(struct at_state *state, struct at_reader *reader, const struct at_call *call,
                          enum at_call_style style, struct at_render_scratch *scratch, const char **why)
{
    struct at_details *details = at_walk_enter_details(scratch, style, call->number, call->enter_offset);
    uint64_t thread;
    at_reader_seek(reader, call->enter_offset);
    if (at_getc(reader) != 0x00 || (state->version >= 4 && !at_uint(reader, &thread))) {
        *why = "enter event unreadable";
        return FALSE;
    }
    scratch->sig = at_function_sig(state, reader, FALSE);
    if (!scratch->sig || !at_call_details(state, reader, details)) {
        *why = details->why ? details->why : "bad function signature";
        return FALSE;
    }
    if (call->leave_offset != AT_NO_OFFSET) {
        uint64_t leave_no;
        at_reader_seek(reader, call->leave_offset);
        if (at_getc(reader) != 0x01 || !at_uint(reader, &leave_no) || !at_call_details(state, reader, details)) {
            *why = details->why ? details->why : "leave event unreadable";
            return FALSE;
        }
    }
    return TRUE;
}

/* Argument i's last value (leave overrides enter), or NULL.  `in_order`
 * (from arg_total): the values are those of arguments 0, 1, 2... once
 * each, as a call usually gives them, so value i is the i-th. */
static const struct at_arg_offset *arg_value(const struct at_arg_list *args, uint64_t i, gboolean in_order)
{
    if (in_order)
        return i < args->len ? &args->items[i] : NULL;
    for (size_t k = args->len; k-- > 0;)
        if (args->items[k].index == i)
            return &args->items[k];
    return NULL;
}

static uint64_t arg_total(const struct at_render_scratch *scratch, gboolean *in_order)
{
    uint64_t total = scratch->sig->arg_count;
    *in_order = TRUE;
    for (size_t k = 0; k < scratch->args.len; k++) {
        total = MAX(total, scratch->args.items[k].index + 1);
        *in_order = *in_order && scratch->args.items[k].index == k;
    }
    return total;
}

static void backtrace_frame_text(const struct at_frame *frame, GString *out)
{
    g_string_append(out, frame->module ? frame->module : "?");
    if (frame->function)
        g_string_append_printf(out, ": %s", frame->function);
    if (frame->offset >= 0)
        g_string_append_printf(out, "+0x%" PRIx64, (uint64_t)frame->offset);
    if (frame->filename) {
        g_string_append_printf(out, ": %s", frame->filename);
        if (frame->line >= 0)
            g_string_append_printf(out, ":%d", frame->line);
    }
}

static gboolean render_backtrace(struct at_state *state, struct at_reader *reader, uint64_t offset,
                                 gboolean json, GString *out)
{
    uint64_t count;
    at_reader_seek(reader, offset);
    if (!at_uint(reader, &count) || count > LIMIT_APITRACE_BACKTRACE_FRAMES)
        return FALSE;
    g_string_append(out, json ? ",\n  \"backtrace\": [" : "Backtrace:\n");
    for (uint64_t i = 0; i < count; i++) {
        const struct at_frame *frame = at_frame_sig(state, reader, FALSE);
        if (!frame)
            return FALSE;
        if (!json) {
            backtrace_frame_text(frame, out);
            g_string_append_c(out, '\n');
            continue;
        }
        g_string_append(out, i ? ", " : "");
        g_string_append(out, "{\"module\": ");
        text_json_cstring(out, frame->module ? frame->module : "");
        g_string_append(out, ", \"function\": ");
        text_json_cstring(out, frame->function ? frame->function : "");
        g_string_append(out, ", \"file\": ");
        text_json_cstring(out, frame->filename ? frame->filename : "");
        g_string_append_printf(out, ", \"line\": %d, \"offset\": %" PRId64 ", \"text\": ", frame->line, frame->offset);
        GString *text = g_string_new(NULL);
        backtrace_frame_text(frame, text);
        text_json_string(out, text->str, text->len);
        g_string_free(text, TRUE);
        g_string_append_c(out, '}');
    }
    if (json)
        g_string_append_c(out, ']');
    return TRUE;
}

/* Text written straight into out's buffer: room for a whole piece is made
 * once, then its parts are copied without a check each (a call's line
 * was a dozen appends, each checking, updating and terminating out). */
struct text_cursor {
    GString *out;
    char *at, *end;
};

static void cursor_begin(struct text_cursor *w, GString *out, size_t n)
{
    text_reserve(out, n);
    w->out = out;
    w->at = out->str + out->len;
    w->end = out->str + out->allocated_len;
}

static void cursor_end(struct text_cursor *w)
{
    w->out->len = (size_t)(w->at - w->out->str);
    *w->at = '\0';
}

/* Makes room for n more bytes (and the NUL out keeps after them). */
static void cursor_room(struct text_cursor *w, size_t n)
{
    if ((size_t)(w->end - w->at) > n)
        return;
    cursor_end(w);
    cursor_begin(w, w->out, n);
}

static void cursor_put(struct text_cursor *w, const char *s, size_t n)
{
    text_copy(w->at, s, n);
    w->at += n;
}

/* A number as text.h's `append` writes it (room for it is the caller's). */
static void cursor_append(struct text_cursor *w, void (*append)(GString *out, uint64_t value), uint64_t value)
{
    cursor_end(w);
    append(w->out, value);
    cursor_begin(w, w->out, 0);
}

/* The call number's text: the last one's plus one when it follows it. */
static void cursor_put_number(struct text_cursor *w, struct at_render_scratch *scratch, uint64_t number)
{
    char *text = scratch->number_text;
    size_t len = scratch->number_len;
    gboolean follows = len && number == scratch->number_written + 1;
    scratch->number_written = number;
    if (!follows) {
        size_t start = (size_t)(w->at - w->out->str);
        cursor_append(w, text_append_u64, number);
        scratch->number_len = (size_t)(w->at - w->out->str) - start;
        memcpy(text, w->out->str + start, scratch->number_len);
        return;
    }
    size_t i = len;
    while (i > 0 && text[i - 1] == '9')
        text[--i] = '0';
    if (i > 0) {
        text[i - 1]++;
    } else {                       /* 999 -> 1000 */
        memmove(text + 1, text, len);
        text[0] = '1';
        len++;
    }
    scratch->number_len = len;
    cursor_put(w, text, len);
}

/* Room for the number, the thread, " // fake incomplete" and such. */
#define DUMP_FIXED_ROOM 96u

/* ", name = value" (no comma before the first). */
static void dump_arg(struct text_cursor *w, const struct at_render_scratch *scratch, uint64_t i, gboolean in_order)
{
    const char *name = i < scratch->sig->arg_count ? scratch->sig->arg_names[i] : "arg";
    size_t name_len = strlen(name);
    const struct at_arg_offset *value = arg_value(&scratch->args, i, in_order);
    size_t value_len = value ? (size_t)value->length : 1;
    cursor_room(w, name_len + value_len + DUMP_FIXED_ROOM);
    if (i)
        cursor_put(w, ", ", 2);
    cursor_put(w, name, name_len);
    if (i >= scratch->sig->arg_count)
        cursor_append(w, text_append_u64, i);
    cursor_put(w, " = ", 3);
    if (value)
        cursor_put(w, scratch->values->str + value->start, value_len);
    else
        *w->at++ = '?';
}

/* The call's line, up to its newline. */
static void dump_line(const struct at_call *call, gboolean verbose, struct at_render_scratch *scratch, GString *out)
{
    const struct at_details *details = &scratch->details;
    struct text_cursor w;
    size_t name_len = strlen(scratch->sig->name);
    cursor_begin(&w, out, name_len + DUMP_FIXED_ROOM);
    cursor_put_number(&w, scratch, call->number);
    *w.at++ = ' ';
    if (verbose) {
        *w.at++ = '@';
        cursor_append(&w, text_append_hex, call->thread);
        *w.at++ = ' ';
    }
    cursor_put(&w, scratch->sig->name, name_len);
    *w.at++ = '(';
    gboolean in_order;
    uint64_t total = arg_total(scratch, &in_order);
    for (uint64_t i = 0; i < total; i++)
        dump_arg(&w, scratch, i, in_order);
    size_t ret_len = details->ret_offset != AT_NO_OFFSET ? (size_t)details->ret_length : 0;
    cursor_room(&w, ret_len + DUMP_FIXED_ROOM);
    *w.at++ = ')';
    if (details->ret_offset != AT_NO_OFFSET) {
        cursor_put(&w, " = ", 3);
        cursor_put(&w, scratch->values->str + details->ret_start, ret_len);
    }
    if (call->flags & (AT_FLAG_FAKE | AT_FLAG_INCOMPLETE)) {
        cursor_put(&w, " //", 3);
        if (call->flags & AT_FLAG_FAKE)
            cursor_put(&w, " fake", 5);
        if (call->flags & AT_FLAG_INCOMPLETE)
            cursor_put(&w, " incomplete", 11);
    }
    *w.at++ = '\n';
    cursor_end(&w);
}

static gboolean render_dump(struct at_state *state, struct at_reader *reader, const struct at_call *call,
                            gboolean verbose, struct at_render_scratch *scratch, GString *out, const char **why)
{
    dump_line(call, verbose, scratch, out);
    if (scratch->details.backtrace_offset != AT_NO_OFFSET &&
        !render_backtrace(state, reader, scratch->details.backtrace_offset, FALSE, out))
        return (*why = "bad backtrace", FALSE);
    if (call->flags & AT_FLAG_END_FRAME)
        text_append_c(out, '\n');
    return TRUE;
}

static const char *const flag_names[] = {
    "FAKE", "NON_REPRODUCIBLE", "NO_SIDE_EFFECTS", "RENDER", "SWAP_RENDERTARGET",
    "END_FRAME", "INCOMPLETE", "VERBOSE", "MARKER", "MARKER_PUSH", "MARKER_POP",
};

static gboolean render_json(struct at_state *state, struct at_reader *reader, const struct at_call *call,
                            const struct at_render_scratch *scratch, GString *out, const char **why)
{
    const struct at_details *details = &scratch->details;
    g_string_append_printf(out, "{\n  \"number\": %" PRIu64 ",\n  \"thread\": %u,\n  \"function\": ",
                           call->number, call->thread);
    text_json_string(out, scratch->sig->name, scratch->sig->name_len);
    g_string_append_printf(out, ",\n  \"flags\": %u,\n  \"flag_names\": [", call->flags);
    gboolean first = TRUE;
    for (unsigned bit = 0; bit < G_N_ELEMENTS(flag_names); bit++) {
        if (!(call->flags & (1u << bit)))
            continue;
        g_string_append_printf(out, "%s\"%s\"", first ? "" : ", ", flag_names[bit]);
        first = FALSE;
    }
    g_string_append(out, "],\n  \"args\": {");
    gboolean in_order;
    uint64_t total = arg_total(scratch, &in_order);
    for (uint64_t i = 0; i < total; i++) {
        g_string_append(out, i ? ",\n    " : "\n    ");
        if (i < scratch->sig->arg_count)
            text_json_cstring(out, scratch->sig->arg_names[i]);
        else {
            g_string_append(out, "\"arg");
            text_append_u64(out, i);
            g_string_append_c(out, '"');
        }
        g_string_append(out, ": ");
        const struct at_arg_offset *value = arg_value(&scratch->args, i, in_order);
        if (value)
            text_append(out, scratch->values->str + value->start, (size_t)value->length);
        else
            g_string_append(out, "null");
    }
    g_string_append(out, total ? "\n  }" : "}");
    if (details->ret_offset != AT_NO_OFFSET) {
        g_string_append(out, ",\n  \"return\": ");
        text_append(out, scratch->values->str + details->ret_start, (size_t)details->ret_length);
    }
    if (details->backtrace_offset != AT_NO_OFFSET &&
        !render_backtrace(state, reader, details->backtrace_offset, TRUE, out))
        return (*why = "bad backtrace", FALSE);
    g_string_append(out, "\n}\n");
    return TRUE;
}

void at_arg_list_grow(struct at_arg_list *list)
{
    list->capacity = list->capacity ? 2 * list->capacity : 16;
    list->items = g_renew(struct at_arg_offset, list->items, list->capacity);
}

struct at_render_scratch *at_render_scratch_new(void)
{
    struct at_render_scratch *scratch = g_new0(struct at_render_scratch, 1);
    scratch->values = g_string_sized_new(256);
    return scratch;
}

void at_render_scratch_free(struct at_render_scratch *scratch)
{
    g_free(scratch->args.items);
    g_string_free(scratch->values, TRUE);
    if (scratch->reading)
        at_reader_finish(&scratch->reader);
    g_free(scratch);
}

static enum at_value_style value_style(enum at_call_style style)
{
    return style == AT_CALL_JSON ? AT_STYLE_JSON : AT_STYLE_DUMP;
}

/* The scratch's reader, at `offset`. */
static struct at_reader *scratch_reader(struct at_state *state, struct at_render_scratch *scratch, uint64_t offset)
{
    if (!scratch->reading)
        at_reader_init(&scratch->reader, state->stream, offset);
    scratch->reading = TRUE;
    scratch->reader.error = 0;
    at_reader_seek(&scratch->reader, offset);
    return &scratch->reader;
}

/* ---- the walk's side (apitrace_details.h) ---- */

struct at_details *at_walk_enter_details(struct at_render_scratch *scratch, enum at_call_style style,
                                         uint64_t number, uint64_t offset)
{
    scratch->args.len = 0;
    scratch->values->len = 0;            /* g_string_truncate(values, 0) without the call */
    scratch->values->str[0] = '\0';
    scratch->entered = scratch->complete = FALSE;
    scratch->enter_offset = offset;
    struct at_details *details = &scratch->details;
    at_details_init(details, number, FALSE);
    details->args = &scratch->args;
    details->scratch = scratch->values;
    details->style = value_style(style);
    return details;
}

void at_walk_entered(struct at_render_scratch *scratch, struct at_function *sig, gboolean ok)
{
    scratch->sig = sig;
    scratch->entered = ok;
}

struct at_details *at_walk_leave_details(struct at_render_scratch *scratch, uint64_t number, uint64_t enter_offset)
{
    if (!scratch->entered || scratch->complete || scratch->details.call != number ||
        scratch->enter_offset != enter_offset)
        return NULL;
    return &scratch->details;
}

void at_walk_left(struct at_render_scratch *scratch, uint64_t leave_offset, gboolean ok)
{
    scratch->leave_offset = leave_offset;
    scratch->complete = ok;
    scratch->entered = ok;
}

/* Whether the walk rendered the call's values into the scratch in `style`. */
static gboolean rendered_by_walk(const struct at_render_scratch *scratch, const struct at_call *call,
                                 enum at_value_style style)
{
    return scratch->complete && scratch->details.call == call->number && scratch->enter_offset == call->enter_offset &&
           scratch->leave_offset == call->leave_offset && scratch->details.style == style;
}

gboolean at_render_call(struct at_state *state, const struct at_call *call, enum at_call_style style,
                        struct at_render_scratch *scratch, GString *out)
{
    if (call->number >= state->call_count || call->function >= state->functions->len)
        return FALSE;
    const char *why = NULL;
    gsize start = out->len;
    gboolean ok = rendered_by_walk(scratch, call, value_style(style)) ||
                  read_call(state, scratch_reader(state, scratch, call->enter_offset), call, style, scratch, &why);
    scratch->entered = scratch->complete = FALSE;
    /* The reader is wanted again only for a backtrace (its frames are read
     * where the call gives them). */
    uint64_t backtrace = scratch->details.backtrace_offset;
    struct at_reader *reader = ok && backtrace != AT_NO_OFFSET ? scratch_reader(state, scratch, backtrace) : NULL;
    if (ok && style == AT_CALL_JSON)
        ok = render_json(state, reader, call, scratch, out, &why);
    else if (ok)
        ok = render_dump(state, reader, call, style == AT_CALL_DUMP_VERBOSE, scratch, out, &why);
    if (!ok) {
        g_string_truncate(out, start);
        trace_error(state->trace, "call", call->enter_offset, "call %" PRIu64 ": %s",
                    call->number, why ? why : "unreadable");
    }
    return ok;
}

void at_render_properties(struct at_state *state, GString *out)
{
    for (guint i = 0; i < state->properties->len; i++) {
        const struct at_property *p = state->properties->pdata[i];
        g_string_append_printf(out, "// %s = ", p->name);
        at_dump_string(out, p->value, strlen(p->value));
        g_string_append_c(out, '\n');
    }
}
