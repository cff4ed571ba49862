/* The common events and their renderers: the scratch keeps every string of
 * an event valid, JSON lines and Chrome objects are exactly as documented
 * (docs/events.md), the protobuf encoding is canonical, and each export
 * served as a record view reads the same at every offset as a full render
 * (Perfetto's interning state included: segments start cleared). */
#include <string.h>
#include <glib.h>
#include "event_json.h"
#include "perfetto_writer.h"
#include "proto_wire.h"
#include "synthetic_events.h"
#include "trace.h"

static void test_scratch_keeps_strings(void)
{
    struct trace_event_scratch scratch;
    trace_event_scratch_init(&scratch);
    for (int round = 0; round < 3; round++) {
        const char *copies[500];
        char expect[64];
        trace_event_scratch_reset(&scratch);
        /* 500 strings of up to 40 bytes: several blocks in the first round. */
        for (int i = 0; i < 500; i++) {
            int n = g_snprintf(expect, sizeof expect, "string %d of round %d %.*s", i, round, i % 20, "xxxxxxxxxxxxxxxxxxxx");
            copies[i] = trace_event_scratch_copy(&scratch, expect, (size_t)n);
        }
        for (int i = 0; i < 500; i++) {
            int n = g_snprintf(expect, sizeof expect, "string %d of round %d %.*s", i, round, i % 20, "xxxxxxxxxxxxxxxxxxxx");
            g_assert_true(memcmp(copies[i], expect, (size_t)n) == 0);
        }
        /* After the first round the block holds a whole event: no more
         * blocks are filled. */
        if (round > 0)
            g_assert_cmpuint(scratch.full_blocks->len, ==, 0);
    }
    g_assert_cmpstr(trace_event_scratch_copy(&scratch, "x", 0), ==, "");
    trace_event_scratch_clear(&scratch);
}

static void test_kind_names(void)
{
    g_assert_cmpstr(trace_event_kind_name(TRACE_EVENT_BEGIN), ==, "begin");
    g_assert_cmpstr(trace_event_kind_name(TRACE_EVENT_FLOW_STEP), ==, "flow_step");
    g_assert_cmpstr(trace_event_kind_name(TRACE_EVENT_ASYNC_END), ==, "async_end");
    g_assert_cmpstr(trace_event_kind_name(TRACE_EVENT_KIND_COUNT), ==, "unknown");
    for (int k = 0; k < TRACE_EVENT_KIND_COUNT; k++)
        g_assert_cmpstr(trace_event_kind_name((enum trace_event_kind)k), !=, "unknown");
}

/* An event with every arg type. */
static void sample_event(struct trace_event *event, struct trace_event_scratch *scratch)
{
    trace_event_start(event, 7, TRACE_EVENT_COMPLETE);
    event->has_ts = TRUE;
    event->ts = 1234567;
    event->has_dur = TRUE;
    event->dur = 89;
    event->pid = 100;
    event->tid = INT64_C(1) << 60;
    trace_event_set_cat(event, scratch, "gfx", 3);
    trace_event_set_name(event, scratch, "dr\"aw\n\xff", 7);
    trace_event_add_int(event, scratch, "i", 1, -5);
    trace_event_add_int(event, scratch, "big_i", 5, INT64_MIN);
    trace_event_add_uint(event, scratch, "u", 1, UINT64_C(1) << 53);
    trace_event_add_uint(event, scratch, "big_u", 5, (UINT64_C(1) << 53) + 1);
    trace_event_add_double(event, scratch, "d", 1, 0.25);
    trace_event_add_string(event, scratch, "s", 1, "a\"b", 3);
    trace_event_add_pointer(event, scratch, "p", 1, 0x7ffd00);
    trace_event_add_bool(event, scratch, "b", 1, TRUE);
    trace_event_add_null(event, scratch, "n", 1);
}

static void test_json_line(void)
{
    struct trace_event_scratch scratch;
    trace_event_scratch_init(&scratch);
    struct trace_event event;
    sample_event(&event, &scratch);
    GString *out = g_string_new(NULL);
    event_json_line(&event, out);
    g_assert_cmpstr(out->str, ==,
                    "{\"seq\":7,\"ts\":1234567,\"dur\":89,\"kind\":\"complete\",\"pid\":100,"
                    "\"tid\":\"1152921504606846976\",\"cat\":\"gfx\",\"name\":\"dr\\\"aw\\n\\u00ff\",\"id\":null,"
                    "\"args\":{\"i\":-5,\"big_i\":\"-9223372036854775808\",\"u\":9007199254740992,"
                    "\"big_u\":\"9007199254740993\",\"d\":0.25,\"s\":\"a\\\"b\",\"p\":\"0x7ffd00\",\"b\":true,"
                    "\"n\":null}}\n");
    /* No time, no duration, an id: the same keys. */
    trace_event_scratch_reset(&scratch);
    trace_event_start(&event, 0, TRACE_EVENT_FLOW_END);
    event.has_id = TRUE;
    event.id = 9;
    event.pid = -1;
    g_string_truncate(out, 0);
    event_json_line(&event, out);
    g_assert_cmpstr(out->str, ==,
                    "{\"seq\":0,\"ts\":null,\"dur\":null,\"kind\":\"flow_end\",\"pid\":-1,\"tid\":0,\"cat\":\"\","
                    "\"name\":\"\",\"id\":9,\"args\":{}}\n");
    g_string_free(out, TRUE);
    trace_event_scratch_clear(&scratch);
}

static void test_chrome_object(void)
{
    struct trace_event_scratch scratch;
    trace_event_scratch_init(&scratch);
    struct trace_event event;
    sample_event(&event, &scratch);
    GString *out = g_string_new(NULL);
    event_chrome_object(&event, out);
    g_assert_true(g_str_has_prefix(out->str, "{\"ph\":\"X\",\"ts\":1234.567,\"dur\":0.089,\"pid\":100,"
                                             "\"tid\":1152921504606846976,\"cat\":\"gfx\",\"name\":"));
    /* Without a time: placed at its seq (ns). */
    trace_event_scratch_reset(&scratch);
    trace_event_start(&event, 4321, TRACE_EVENT_FLOW_END);
    event.has_id = TRUE;
    event.id = 255;
    g_string_truncate(out, 0);
    event_chrome_object(&event, out);
    g_assert_cmpstr(out->str, ==,
                    "{\"ph\":\"f\",\"ts\":4.321,\"pid\":0,\"tid\":0,\"cat\":\"\",\"name\":\"\",\"bp\":\"e\","
                    "\"id\":\"0xff\",\"args\":{}}");
    trace_event_start(&event, 1, TRACE_EVENT_INSTANT);
    event.has_ts = TRUE;
    event.ts = 5;
    g_string_truncate(out, 0);
    event_chrome_object(&event, out);
    g_assert_cmpstr(out->str, ==,
                    "{\"ph\":\"i\",\"ts\":0.005,\"pid\":0,\"tid\":0,\"cat\":\"\",\"name\":\"\",\"s\":\"t\","
                    "\"args\":{}}");
    /* A kind outside the enum (a decoder's bug) still renders. */
    trace_event_start(&event, 2, (enum trace_event_kind)99);
    g_string_truncate(out, 0);
    event_chrome_object(&event, out);
    g_assert_true(g_str_has_prefix(out->str, "{\"ph\":\"i\","));
    g_string_truncate(out, 0);
    event_json_line(&event, out);
    g_assert_nonnull(strstr(out->str, "\"kind\":\"unknown\""));
    g_string_free(out, TRUE);
    trace_event_scratch_clear(&scratch);
}

static void assert_bytes(const GString *out, const char *expect, size_t len)
{
    g_assert_cmpuint(out->len, ==, len);
    g_assert_true(memcmp(out->str, expect, len) == 0);
}

static void test_proto_wire(void)
{
    GString *out = g_string_new(NULL);
    proto_varint(out, 0);
    proto_varint(out, 127);
    proto_varint(out, 128);
    proto_varint(out, 300);
    assert_bytes(out, "\x00\x7f\x80\x01\xac\x02", 6);
    g_string_truncate(out, 0);
    proto_varint(out, UINT64_MAX);
    assert_bytes(out, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
    g_string_truncate(out, 0);
    proto_int(out, 1, -1);   /* field 1, varint: ten bytes of two's complement */
    assert_bytes(out, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    g_string_truncate(out, 0);
    proto_fixed64(out, 47, 0x0102030405060708);
    assert_bytes(out, "\xf9\x02\x08\x07\x06\x05\x04\x03\x02\x01", 10);
    g_string_truncate(out, 0);
    proto_double(out, 5, 1.0);
    assert_bytes(out, "\x29\x00\x00\x00\x00\x00\x00\xf0\x3f", 9);
    /* Nested: the length takes the bytes it needs, in the outer one too. */
    g_string_truncate(out, 0);
    size_t outer = proto_open(out, 1);
    size_t inner = proto_open(out, 2);
    for (int i = 0; i < 200; i++)
        g_string_append_c(out, 'x');
    proto_close(out, inner);
    proto_close(out, outer);
    g_assert_cmpuint(out->len, ==, 1 + 2 + 1 + 2 + 200);
    g_assert_true(memcmp(out->str, "\x0a\xcb\x01\x12\xc8\x01xx", 8) == 0);
    g_string_truncate(out, 0);
    size_t empty = proto_open(out, 8);
    proto_close(out, empty);
    assert_bytes(out, "\x42\x00", 2);
    g_string_free(out, TRUE);
}

/* Every byte range of the view equals the same range of a full render
 * (which is what checkpoints and resumption must give), and so does a read
 * of every record from its own checkpoint. */
static void check_view_ranges(struct trace *trace, const struct view_ops *ops, const uint64_t arg[3])
{
    struct view view = { .ops = ops, .context = trace, .arg = { arg[0], arg[1], arg[2] } };
    GString *full = g_string_new(NULL);
    struct view_cursor cursor;
    ops->begin(&view, &cursor);
    while (ops->next(&view, &cursor, full) == VIEW_RECORD)
        ;
    struct view_index index;
    view_index_build(trace, &view, &index);
    g_assert_cmpuint(index.size, ==, full->len);
    g_assert_false(index.failed);
    g_assert_cmpuint(index.checkpoint_count, >=, full->len / (160 * 1024));
    char *buf = g_malloc(200000);
    GRand *rand = g_rand_new_with_seed(7);
    for (int round = 0; round < 200; round++) {
        uint64_t offset = (uint64_t)g_rand_int_range(rand, 0, (gint32)full->len + 10);
        size_t len = (size_t)g_rand_int_range(rand, 0, 200000);
        ssize_t n = view_read(trace, &view, &index, offset, buf, len);
        size_t expect = offset >= full->len ? 0 : MIN(len, full->len - offset);
        g_assert_cmpint(n, ==, (ssize_t)expect);
        g_assert_true(memcmp(buf, full->str + MIN(offset, full->len), expect) == 0);
    }
    g_rand_free(rand);
    g_free(buf);
    view_index_clear(&index);
    g_string_free(full, TRUE);
}

static void test_views_read_anywhere(void)
{
    struct synthetic_trace *events = synthetic_trace_new(6000, 24);
    struct trace trace;
    memset(&trace, 0, sizeof trace);
    trace.format_state = events;
    const uint64_t all[3] = { 0, 0, 0 };
    const uint64_t one[3] = { 1, 100, 102 };
    check_view_ranges(&trace, &synthetic_jsonl_ops, all);
    check_view_ranges(&trace, &synthetic_jsonl_ops, one);
    check_view_ranges(&trace, &synthetic_chrome_ops, all);
    check_view_ranges(&trace, &synthetic_perfetto_ops, all);
    synthetic_trace_free(events);
}

/* Perfetto: a segment is a record; rendering it alone from its cursor
 * (fresh writer) gives the bytes it had in the whole export, and each
 * segment is bounded. */
static void test_perfetto_segments(void)
{
    struct synthetic_trace *events = synthetic_trace_new(6000, 24);
    struct trace trace;
    memset(&trace, 0, sizeof trace);
    trace.format_state = events;
    struct trace_event_scratch scratch;
    trace_event_scratch_init(&scratch);
    struct perfetto_writer *writer = perfetto_writer_new();
    GString *whole = g_string_new(NULL), *again = g_string_new(NULL);
    GArray *starts = g_array_new(FALSE, FALSE, sizeof(struct view_cursor));
    GArray *offsets = g_array_new(FALSE, FALSE, sizeof(size_t));
    struct view_cursor cursor;
    event_export_begin(&trace, &synthetic_iterator, &cursor);
    for (;;) {
        size_t before = whole->len;
        g_array_append_val(starts, cursor);
        g_array_append_val(offsets, before);
        if (perfetto_export_next(&trace, &synthetic_iterator, &cursor, &scratch, writer, whole) != VIEW_RECORD)
            break;
        g_assert_cmpuint(perfetto_writer_segment_events(writer), <=, PERFETTO_SEGMENT_EVENTS);
        g_assert_cmpuint(whole->len - before, <, PERFETTO_SEGMENT_BYTES + 4096);
    }
    g_assert_cmpuint(starts->len, >, 4);
    size_t end = whole->len;
    g_array_append_val(offsets, end);
    for (guint k = starts->len - 1; k-- > 0;) {   /* backwards: nothing carries over */
        struct perfetto_writer *fresh = perfetto_writer_new();
        struct view_cursor c = g_array_index(starts, struct view_cursor, k);
        g_string_truncate(again, 0);
        g_assert_cmpint(perfetto_export_next(&trace, &synthetic_iterator, &c, &scratch, fresh, again), ==,
                        VIEW_RECORD);
        size_t from = g_array_index(offsets, size_t, k), to = g_array_index(offsets, size_t, k + 1);
        g_assert_cmpuint(again->len, ==, to - from);
        g_assert_true(memcmp(again->str, whole->str + from, again->len) == 0);
        perfetto_writer_free(fresh);
    }
    g_array_free(starts, TRUE);
    g_array_free(offsets, TRUE);
    g_string_free(whole, TRUE);
    g_string_free(again, TRUE);
    perfetto_writer_free(writer);
    trace_event_scratch_clear(&scratch);
    synthetic_trace_free(events);
}

/* An iterator error: events.jsonl ends there, chrome.json closes its array
 * (still JSON), the Perfetto export keeps the segment so far and then
 * ends with an error. */
static void test_iterator_error(void)
{
    struct synthetic_trace *events = synthetic_trace_new(300, 5);
    events->fail_at = 100;
    struct trace trace;
    memset(&trace, 0, sizeof trace);
    trace.format_state = events;
    const struct view_ops *const ops[3] = { &synthetic_jsonl_ops, &synthetic_chrome_ops, &synthetic_perfetto_ops };
    for (int k = 0; k < 3; k++) {
        struct view view = { .ops = ops[k], .context = &trace };
        struct view_index index;
        view_index_build(&trace, &view, &index);
        g_assert_cmpint(index.failed, ==, k != 1);
        g_assert_cmpuint(index.size, >, 0);
        if (k == 1) {
            GString *text = g_string_new(NULL);
            g_assert_cmpint(view_render_all(&trace, &view, text), ==, 0);
            g_assert_true(g_str_has_suffix(text->str, EVENT_CHROME_TRAILER));
            g_string_free(text, TRUE);
        }
        view_index_clear(&index);
    }
    synthetic_trace_free(events);
}

/* threads' files partition events.jsonl. */
static void test_thread_filter_partitions(void)
{
    struct synthetic_trace *events = synthetic_trace_new(2000, 11);
    struct trace trace;
    memset(&trace, 0, sizeof trace);
    trace.format_state = events;
    struct view all = { .ops = &synthetic_jsonl_ops, .context = &trace };
    GString *text = g_string_new(NULL);
    g_assert_cmpint(view_render_all(&trace, &all, text), ==, 0);
    size_t total = text->len, lines = 0;
    for (size_t i = 0; i < text->len; i++)
        lines += text->str[i] == '\n';
    g_assert_cmpuint(lines, ==, events->events->len);
    static const int64_t threads[][2] = { { 100, 101 }, { 100, 102 }, { 200, 201 }, { 200, 202 },
                                          { INT64_C(3000000000), 7 }, { 300, INT64_C(1) << 60 } };
    size_t sum = 0;
    for (size_t k = 0; k < G_N_ELEMENTS(threads); k++) {
        struct view one = { .ops = &synthetic_jsonl_ops, .context = &trace,
                            .arg = { 1, (uint64_t)threads[k][0], (uint64_t)threads[k][1] } };
        g_string_truncate(text, 0);
        g_assert_cmpint(view_render_all(&trace, &one, text), ==, 0);
        g_assert_cmpuint(text->len, >, 0);
        sum += text->len;
    }
    g_assert_cmpuint(sum, ==, total);
    g_string_free(text, TRUE);
    synthetic_trace_free(events);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/trace_events/scratch", test_scratch_keeps_strings);
    g_test_add_func("/trace_events/kind_names", test_kind_names);
    g_test_add_func("/trace_events/json_line", test_json_line);
    g_test_add_func("/trace_events/chrome_object", test_chrome_object);
    g_test_add_func("/trace_events/proto_wire", test_proto_wire);
    g_test_add_func("/trace_events/views_read_anywhere", test_views_read_anywhere);
    g_test_add_func("/trace_events/perfetto_segments", test_perfetto_segments);
    g_test_add_func("/trace_events/iterator_error", test_iterator_error);
    g_test_add_func("/trace_events/thread_filter", test_thread_filter_partitions);
    return g_test_run();
}
