/* How one record looks: as a line of events.yaml (llvm-xray convert's YAML)
 * and as a line of the events files. */
#include <inttypes.h>
#include <string.h>
#include "xray_format.h"

/* ", thread: ", 10 digits, ", process: " and put_u64's 20 bytes at most, rounded up. */
#define THREAD_PIECE_BYTES 64

uint64_t xray_tsc_ns(const struct xray_state *state, uint64_t tsc)
{
    uint64_t frequency = state->header.cycle_frequency;
    if (frequency == 0)
        return tsc;
    /* tsc * 10^9 / frequency (mod 2^64) without a 128-bit division, which
     * is a library call: whole periods and the rest, exact while the rest
     * times 10^9 fits, that is for any frequency below 18 GHz. */
    if (frequency < UINT64_MAX / 1000000000u) {
        uint64_t periods = tsc / frequency, rest = tsc % frequency;
        return periods * 1000000000u + rest * 1000000000u / frequency;
    }
    return (uint64_t)(((unsigned __int128)tsc * 1000000000u) / frequency);
}

/* FDR v2 logs have no Pid record and llvm's expander reports the tid as the
 * process; v1 and basic logs before v3 have none (0, which YAML omits). */
uint32_t xray_shown_pid(const struct xray_state *state, const struct xray_thread *thread)
{
    if (state->header.type == 1 && state->header.version == 2)
        return (uint32_t)thread->tid;
    return (uint32_t)thread->pid;
}

/* Each function's "func-id: N, function: NAME" as events.yaml shows it,
 * made once at index time: quoting a name is the costly part of a line, and
 * a log repeats few functions millions of times.  One text and the ends of
 * its pieces, so the table costs about the names themselves. */
struct thread_piece {
    uint8_t len;
    char text[THREAD_PIECE_BYTES - 1];
};

struct xray_yaml_labels {
    GString *text;
    uint64_t *ends;           /* piece of id i (1-based): [ends[i - 1], ends[i]) */
    uint32_t count;
    struct thread_piece *threads;   /* per thread: ", thread: T[, process: P]" */
};

static struct xray_yaml_labels *labels_new(uint32_t count)
{
    struct xray_yaml_labels *labels = g_new0(struct xray_yaml_labels, 1);
    labels->text = g_string_new(NULL);
    labels->ends = g_new0(uint64_t, (gsize)count + 1);   /* ends[0] = 0 */
    labels->count = count;
    return labels;
}

/* A function's piece, made afresh (for the table, or an id not in it). */
static void append_function_piece(const struct xray_state *state, uint32_t func_id, GString *out)
{
    int32_t id = (int32_t)func_id;
    text_append_cstring(out, "func-id: ");
    text_append_i64(out, id);
    text_append_cstring(out, ", function: ");
    if (!state->symbols) {   /* an id is numeric: LLVM single-quotes it */
        g_string_append_c(out, '\'');
        text_append_i64(out, id);
        g_string_append_c(out, '\'');
        return;
    }
    GString *label = g_string_new(NULL);
    xray_function_label(state, func_id, label);
    xray_yaml_scalar(out, label->str, label->len);
    g_string_free(label, TRUE);
}

void xray_prepare_labels(struct xray_state *state)
{
    if (!state->symbols)
        return;
    uint32_t count = xray_symbols_function_count(state->symbols);
    struct xray_yaml_labels *labels = labels_new(count);
    for (uint32_t id = 1; id <= count; id++) {
        append_function_piece(state, id, labels->text);
        labels->ends[id] = labels->text->len;
    }
    state->yaml_labels = labels;
}

void xray_free_labels(struct xray_yaml_labels *labels)
{
    if (!labels)
        return;
    g_string_free(labels->text, TRUE);
    g_free(labels->ends);
    g_free(labels->threads);
    g_free(labels);
}

/* The function's piece, from the table when it holds the id. */
static void append_func_id_and_name(const struct xray_state *state, uint32_t func_id, GString *out)
{
    const struct xray_yaml_labels *labels = state->yaml_labels;
    int32_t id = (int32_t)func_id;
    if (labels && id >= 1 && (uint32_t)id <= labels->count) {
        uint64_t start = labels->ends[id - 1];
        text_append(out, labels->text->str + start, labels->ends[id] - start);
        return;
    }
    append_function_piece(state, func_id, out);
}

void xray_render_yaml_header(const struct xray_state *state, GString *out)
{
    const struct xray_header *h = &state->header;
    g_string_append_printf(out,
        "---\nheader:\n  version:         %u\n  type:            %u\n"
        "  constant-tsc:    %s\n  nonstop-tsc:     %s\n  cycle-frequency: %" PRIu64 "\n",
        h->version, h->type, (h->bitfield & 1) ? "true" : "false", (h->bitfield & 2) ? "true" : "false",
        h->cycle_frequency);
    text_append_cstring(out, state->records ? "records:\n" : "records:         []\n");
}

/* A custom or typed event's payload. */
static void append_payload(const struct xray_state *state, const struct xray_record *record, GString *out,
                           gboolean yaml)
{
    guint8 *bytes = g_malloc(record->payload_size ? record->payload_size : 1);
    if (stream_read_exact(state->stream, record->payload_offset, bytes, record->payload_size) != 0) {
        g_free(bytes);
        text_append_cstring(out, yaml ? "''" : "<unreadable>");
        return;
    }
    if (yaml) {
        xray_yaml_scalar(out, (const char *)bytes, record->payload_size);
    } else {
        for (uint32_t i = 0; i < record->payload_size; i++) {
            guint8 c = bytes[i];
            if (c >= 0x20 && c < 0x7f && c != '\\' && c != ' ')
                g_string_append_c(out, (char)c);
            else
                g_string_append_printf(out, "\\x%02x", c);
        }
    }
    g_free(bytes);
}

/* ---- a record's line, written into reserved room: millions of lines made
 * of a dozen short pieces each ---- */

/* What follows the function in a line but the payload: seven keys and
 * five numbers (20 bytes each, see put_u64), with room to spare. */
#define YAML_TAIL_MAX_BYTES 256

#define EIGHT_DIGITS 100000000u

/* value (< 10^8) as exactly eight digits ending at end: two halves of four,
 * four independent pairs (no loop). */
static void put_eight_digits_before(char *end, uint32_t value)
{
    uint32_t high = value / 10000, low = value - high * 10000;
    uint32_t high_pair = high / 100, low_pair = low / 100;
    memcpy(end - 8, text_digit_pairs + 2 * high_pair, 2);
    memcpy(end - 6, text_digit_pairs + 2 * (high - high_pair * 100), 2);
    memcpy(end - 4, text_digit_pairs + 2 * low_pair, 2);
    memcpy(end - 2, text_digit_pairs + 2 * (low - low_pair * 100), 2);
}

/* printf's %llu at `at` (at most 20 bytes); returns the end. */
static char *put_u64(char *at, uint64_t value)
{
    return at + text_format_u64(at, value);
}

/* A TSC's digits above its last eight change every 10^8 ticks (tens of
 * milliseconds): each reader thread keeps the last ones it wrote. */
struct tsc_high_digits {
    uint64_t high;            /* tsc / 10^8 (at most 12 digits); UINT64_MAX: none */
    size_t len;
    char text[24];            /* put_u64 writes up to 20 bytes; put_tsc copies 12 */
};

static _Thread_local struct tsc_high_digits last_tsc_high = { UINT64_MAX, 0, { 0 } };

/* put_u64 of a TSC; writes at most 20 bytes too. */
static char *put_tsc(char *at, uint64_t tsc)
{
    if (tsc < EIGHT_DIGITS)
        return put_u64(at, tsc);
    uint64_t high = tsc / EIGHT_DIGITS;
    struct tsc_high_digits *memo = &last_tsc_high;
    if (memo->high != high) {
        memo->len = (size_t)(put_u64(memo->text, high) - memo->text);
        memo->high = high;
    }
    memcpy(at, memo->text, 12);
    at += memo->len;
    put_eight_digits_before(at + 8, (uint32_t)(tsc - high * EIGHT_DIGITS));
    return at + 8;
}

static char *put(char *at, const char *s, size_t n)
{
    memcpy(at, s, n);
    return at + n;
}

#define PUT_LITERAL(at, s) put((at), (s), sizeof(s) - 1)

/* Each thread's ", thread: T, process: P" (the same in all its records),
 * once the threads are known (after the index pass or its loading): at
 * most THREAD_PIECE_BYTES - 1 bytes (put_u64's 20 included). */
void xray_prepare_thread_labels(struct xray_state *state)
{
    if (!state->yaml_labels)
        state->yaml_labels = labels_new(0);
    struct xray_yaml_labels *labels = state->yaml_labels;
    g_free(labels->threads);
    labels->threads = g_new(struct thread_piece, state->threads->len ? state->threads->len : 1);
    for (uint32_t t = 0; t < state->threads->len; t++) {
        const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, t);
        struct thread_piece *piece = &labels->threads[t];
        char *at = PUT_LITERAL(piece->text, ", thread: ");
        at = put_u64(at, (uint32_t)thread->tid);
        uint32_t pid = xray_shown_pid(state, thread);
        if (pid) {   /* an optional YAML key with default 0 */
            at = PUT_LITERAL(at, ", process: ");
            at = put_u64(at, pid);
        }
        piece->len = (uint8_t)(at - piece->text);
    }
}

struct kind_text {
    const char *text;
    size_t len;
};

#define KIND_TEXT(s) { s, sizeof(s) - 1 }

/* The kinds' names with their lengths, by the kind's 3 bits. */
static const struct kind_text kind_texts[8] = {
    KIND_TEXT("function-enter"), KIND_TEXT("function-exit"), KIND_TEXT("function-tail-exit"),
    KIND_TEXT("function-enter-arg"), KIND_TEXT("custom-event"), KIND_TEXT("typed-event"),
    KIND_TEXT("unknown"), KIND_TEXT("unknown"),
};

static const struct kind_text *kind_text(enum xray_kind kind)
{
    return &kind_texts[(unsigned)kind < 8 ? (unsigned)kind : 7];
}

const char *xray_kind_name(enum xray_kind kind)
{
    return kind_text(kind)->text;
}

/* ", args: [ A ]" ... ", data: ": everything after the function that has
 * a bounded size.  Ends with the payload still to write. */
static char *put_yaml_tail(const struct xray_state *state, const struct xray_record *record, char *at)
{
    if (record->has_arg) {
        at = PUT_LITERAL(at, ", args: [ ");
        at = put_u64(at, record->arg);
        at = PUT_LITERAL(at, " ]");
    }
    at = PUT_LITERAL(at, ", cpu: ");
    at = put_u64(at, record->cpu);
    const struct thread_piece *piece = &state->yaml_labels->threads[record->thread];   /* made with the tree */
    at = put(at, piece->text, piece->len);
    at = PUT_LITERAL(at, ", kind: ");
    const struct kind_text *kind = kind_text(record->kind);
    at = put(at, kind->text, kind->len);
    at = PUT_LITERAL(at, ", tsc: ");
    at = put_tsc(at, record->tsc);
    return PUT_LITERAL(at, ", data: ");
}

void xray_render_yaml_record(const struct xray_state *state, const struct xray_record *record, GString *out)
{
    text_append(out, "  - { type: 0, ", 15);
    append_func_id_and_name(state, record->func_id, out);
    size_t start = out->len;
    g_string_set_size(out, start + YAML_TAIL_MAX_BYTES);
    char *at = put_yaml_tail(state, record, out->str + start);
    gboolean event = record->kind == XRAY_CUSTOM || record->kind == XRAY_TYPED;
    if (!event)
        at = PUT_LITERAL(at, "'' }\n");
    out->len = (gsize)(at - out->str);
    *at = '\0';
    if (event) {
        append_payload(state, record, out, TRUE);
        text_append_cstring(out, " }\n");
    }
}

/* "<ns> [<tid>] <cpu> <kind> <func-id> [arg=] [type= size= data=] fn=<name>":
 * fixed columns first, the name (which may hold spaces) last. */
void xray_render_event_line(const struct xray_state *state, const struct xray_record *record,
                            gboolean with_thread, GString *out)
{
    const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, record->thread);
    text_append_u64(out, xray_tsc_ns(state, record->tsc));
    g_string_append_c(out, ' ');
    if (with_thread) {
        text_append_i64(out, thread->tid);
        g_string_append_c(out, ' ');
    }
    gboolean event = record->kind == XRAY_CUSTOM || record->kind == XRAY_TYPED;
    text_append_u64(out, record->cpu);
    g_string_append_c(out, ' ');
    text_append_cstring(out, xray_kind_name(record->kind));
    g_string_append_c(out, ' ');
    if (event)
        text_append_cstring(out, "-");
    else
        text_append_u64(out, record->func_id);
    text_append_cstring(out, " tsc=");
    text_append_u64(out, record->tsc);
    if (record->has_arg) {
        text_append_cstring(out, " arg=");
        text_append_u64(out, record->arg);
    }
    if (event) {
        if (record->kind == XRAY_TYPED)
            g_string_append_printf(out, " type=%u", record->event_type);
        g_string_append_printf(out, " size=%" PRIu32 " data=", record->payload_size);
        append_payload(state, record, out, FALSE);
        g_string_append_c(out, '\n');
        return;
    }
    text_append_cstring(out, " fn=");
    xray_append_function_name(state, record->func_id, out);
    g_string_append_c(out, '\n');
}
