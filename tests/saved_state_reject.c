/* The loaders of saved format state (struct format's `load` hook) refuse
 * what their index pass could never have saved.  Each case saves a sample's
 * state broken in one place, wraps it in a valid index file (header, key,
 * checksum) and opens the sample requiring that index: the open must fail.
 * The unbroken state must load, or the cases would prove nothing.
 *
 * FXT's state is broken in memory before its own writer saves it, so the
 * cases do not depend on the byte layout; rr's layout is fixed words
 * (rr_saved.c), broken in place. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "format.h"
#include "index_file.h"
#include "saved_bytes.h"
#include "trace.h"
#include "tracefs_limits.h"
#ifdef TRACEFS_FORMAT_FXT
#include "fxt.h"
#endif
#ifdef TRACEFS_FORMAT_SPRTRACE
#include "sprtrace.h"
#endif

#define SAMPLE(path) TRACEFS_SOURCE_ROOT "/tests/data/" path

static char *index_dir;

static struct trace *open_sample(const char *format, const char *path, gboolean from_saved)
{
    struct trace_options options = { .format_name = format, .index_dir = index_dir, .cache_bytes = 4u << 20,
                                     .no_index = !from_saved, .require_saved_index = from_saved };
    char *message = NULL;
    struct trace *trace = trace_open(path, &options, &message);
    g_free(message);
    return trace;
}

/* The format state as the sample's index pass leaves it, changed by `breaker`
 * (if any) before the format's writer saves it. */
static GByteArray *saved_state(const char *format, const char *path, void (*breaker)(struct trace *))
{
    struct trace *trace = open_sample(format, path, FALSE);
    g_assert_nonnull(trace);
    if (breaker)
        breaker(trace);
    struct saved_writer *writer = saved_writer_new();
    g_assert_cmpint(trace->format->save(trace, writer), ==, 0);
    GByteArray *state = saved_writer_join(writer);
    saved_writer_free(writer);
    trace_close(trace);
    return state;
}

/* Whether `state` loads as the saved index of the sample. */
static gboolean state_loads(const char *format, const char *path, const GByteArray *state)
{
    GByteArray *file = g_byte_array_new();
    struct trace *key = open_sample(format, path, FALSE);
    g_assert_nonnull(key);
    index_file_encode_state(key, state->data, state->len, file);
    char *index = index_file_path(key);
    trace_close(key);
    g_assert_true(g_file_set_contents(index, (const char *)file->data, file->len, NULL));
    g_chmod(index, 0600);   /* the loader refuses a group-writable index (umask 002) */
    struct trace *loaded = open_sample(format, path, TRUE);
    if (loaded)
        trace_close(loaded);
    g_unlink(index);
    g_free(index);
    g_byte_array_free(file, TRUE);
    return loaded != NULL;
}

struct sample {
    const char *format, *path;
};

static gboolean format_missing(const char *format)
{
    if (format_find(format))
        return FALSE;
    g_test_skip("format not built in (-Dformats=)");
    return TRUE;
}

/* The sample's own state loads; cut short by a byte, or with one more, it
 * does not. */
static void test_length(gconstpointer data)
{
    const struct sample *sample = data;
    if (format_missing(sample->format))
        return;
    GByteArray *state = saved_state(sample->format, sample->path, NULL);
    g_assert_true(state_loads(sample->format, sample->path, state));
    guint8 extra = 0;
    g_byte_array_append(state, &extra, 1);
    g_assert_false(state_loads(sample->format, sample->path, state));
    g_byte_array_set_size(state, state->len - 2);
    g_assert_false(state_loads(sample->format, sample->path, state));
    g_byte_array_free(state, TRUE);
}

/* ---- FXT ---- */
#ifdef TRACEFS_FORMAT_FXT
#define FXT_SAMPLE SAMPLE("fxt/synthetic-le.fxt")

static struct fxt_state *fxt_of(struct trace *trace)
{
    return trace->format_state;
}

static struct fxt_counter *add_counter(struct fxt_state *s, uint32_t name_string)
{
    struct fxt_counter *c = g_new0(struct fxt_counter, 1);
    c->name_string = name_string;
    c->columns = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_ptr_array_add(s->counters, c);
    return c;
}

static struct fxt_thread *add_thread(struct fxt_state *s, uint64_t pid, uint64_t tid)
{
    struct fxt_thread *t = g_new0(struct fxt_thread, 1);
    t->pid = pid;
    t->tid = tid;
    t->runs = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
    g_ptr_array_add(s->threads, t);
    return t;
}

static void data_end_past_file(struct trace *trace)
{
    fxt_of(trace)->data_end = (uint64_t)trace->st.st_size + 1;
}

static void pool_string_twice(struct trace *trace)
{
    struct fxt_state *s = fxt_of(trace);
    g_ptr_array_add(s->pool, g_bytes_ref(g_ptr_array_index(s->pool, 0)));
}

static void pool_string_too_long(struct trace *trace)
{
    g_ptr_array_add(fxt_of(trace)->pool, g_bytes_new_take(g_malloc0(FXT_RECORD_MAX_BYTES + 1), FXT_RECORD_MAX_BYTES + 1));
}

static void second_anonymous_provider(struct trace *trace)
{
    g_ptr_array_add(fxt_of(trace)->providers, fxt_provider_new(0, FALSE));
}

static void provider_id_twice(struct trace *trace)
{
    g_ptr_array_add(fxt_of(trace)->providers, fxt_provider_new(4242, TRUE));
    g_ptr_array_add(fxt_of(trace)->providers, fxt_provider_new(4242, TRUE));
}

static void provider_events_over_limit(struct trace *trace)
{
    const struct fxt_provider *p = g_ptr_array_index(fxt_of(trace)->providers, 0);
    g_array_set_size(p->provider_events, LIMIT_FXT_PROVIDER_EVENTS + 1);
}

static void provider_ticks_past_end(struct trace *trace)
{
    const struct fxt_provider *p = g_ptr_array_index(fxt_of(trace)->providers, 0);
    struct fxt_reg reg = { fxt_of(trace)->data_end + 1, 1000, 0 };
    g_array_append_val(p->ticks, reg);
}

static void switch_to_no_provider(struct trace *trace)
{
    struct fxt_state *s = fxt_of(trace);
    struct fxt_reg reg = { s->data_start, s->providers->len, 0 };
    g_array_append_val(s->provider_switches, reg);
}

static void string_reg_to_no_string(struct trace *trace)
{
    struct fxt_state *s = fxt_of(trace);
    struct fxt_reg reg = { s->data_start, s->pool->len, 0 };
    g_array_append_val(fxt_reg_array(s->string_regs, 0x7fff0001), reg);
}

static void thread_reg_past_end(struct trace *trace)
{
    struct fxt_state *s = fxt_of(trace);
    struct fxt_reg reg = { s->data_end + 1, 1, 2 };
    g_array_append_val(fxt_reg_array(s->thread_regs, 0x7fff0001), reg);
}

static void thread_twice(struct trace *trace)
{
    add_thread(fxt_of(trace), 4242, 4243);
    add_thread(fxt_of(trace), 4242, 4243);
}

static void thread_run_past_end(struct trace *trace)
{
    struct fxt_state *s = fxt_of(trace);
    struct fxt_reg run = { s->data_end, s->data_end, 0 };
    g_array_append_val(add_thread(s, 4242, 4243)->runs, run);
}

static void counter_name_no_string(struct trace *trace)
{
    add_counter(fxt_of(trace), fxt_of(trace)->pool->len);
}

static void counter_column_no_string(struct trace *trace)
{
    struct fxt_state *s = fxt_of(trace);
    uint32_t column = s->pool->len;
    g_array_append_val(add_counter(s, 0)->columns, column);
}

static void counter_columns_over_limit(struct trace *trace)
{
    g_array_set_size(add_counter(fxt_of(trace), 0)->columns, LIMIT_FXT_COUNTER_COLUMNS + 1);
}

static void blob_segment_past_end(struct trace *trace)
{
    struct fxt_state *s = fxt_of(trace);
    struct fxt_blob *b = g_new0(struct fxt_blob, 1);
    b->segments = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
    struct fxt_reg segment = { s->data_start, s->data_end - s->data_start + 1, 0 };
    g_array_append_val(b->segments, segment);
    g_ptr_array_add(s->blobs, b);
}

static void kobject_past_end(struct trace *trace)
{
    g_array_append_val(fxt_of(trace)->kobjects, fxt_of(trace)->data_end);
}

static void cpu_key_zero(struct trace *trace)
{
    g_hash_table_add(fxt_of(trace)->cpus, GUINT_TO_POINTER(0));
}

static void process_name_no_string(struct trace *trace)
{
    struct fxt_state *s = fxt_of(trace);
    uint64_t *koid = g_new(uint64_t, 1);
    *koid = 4242;
    g_hash_table_replace(s->process_names, koid, GUINT_TO_POINTER(s->pool->len));
}

#define BREAKER(f) { #f, f }
static const struct {
    const char *name;
    void (*breaker)(struct trace *);
} fxt_cases[] = {
    BREAKER(data_end_past_file), BREAKER(pool_string_twice), BREAKER(pool_string_too_long),
    BREAKER(second_anonymous_provider), BREAKER(provider_id_twice), BREAKER(provider_events_over_limit),
    BREAKER(provider_ticks_past_end), BREAKER(switch_to_no_provider), BREAKER(string_reg_to_no_string),
    BREAKER(thread_reg_past_end), BREAKER(thread_twice), BREAKER(thread_run_past_end),
    BREAKER(counter_name_no_string), BREAKER(counter_column_no_string), BREAKER(counter_columns_over_limit),
    BREAKER(blob_segment_past_end), BREAKER(kobject_past_end), BREAKER(cpu_key_zero),
    BREAKER(process_name_no_string),
};

static void test_fxt_broken_tables(void)
{
    if (format_missing("fxt"))
        return;
    for (size_t i = 0; i < G_N_ELEMENTS(fxt_cases); i++) {
        GByteArray *state = saved_state("fxt", FXT_SAMPLE, fxt_cases[i].breaker);
        if (state_loads("fxt", FXT_SAMPLE, state))
            g_error("fxt: a saved state with %s loaded", fxt_cases[i].name);
        g_byte_array_free(state, TRUE);
    }
}
#endif

#ifdef TRACEFS_FORMAT_SPRTRACE
/* ---- sp-rtrace ---- */
#define SPRTRACE_SAMPLE SAMPLE("sprtrace/v2.0_file+memory.rtrace")

/* A fuzz finding (saved_state): a leak group with no call made
 * `leaks-compressed` read the frames of call SPRT_NONE. */
static void group_without_calls(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_assert_cmpuint(s->groups->len, >, 0);
    g_array_index(s->groups, struct sprt_group, 0).first_call = SPRT_NONE;
}

static void group_call_past_end(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_array_index(s->groups, struct sprt_group, 0).first_call = s->call_count;
}

static void group_starts_at_freed_call(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    uint32_t i = 0;
    while (sprt_is_leak(s, i))
        i++;
    g_assert_cmpuint(i, <, s->call_count);
    g_array_index(s->groups, struct sprt_group, 0).first_call = i;
}

/* More calls than the group's list holds: the gap reads past the bytes. */
static void group_list_too_short(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    struct sprt_group *g = &g_array_index(s->groups, struct sprt_group, 0);
    g->leak_count = 2;
    g->list_offset = s->group_calls->len;
}

static void group_gap_zero(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    struct sprt_group *g = &g_array_index(s->groups, struct sprt_group, 0);
    uint8_t zero = 0;
    g->leak_count = 2;
    g->list_offset = s->group_calls->len;
    g_byte_array_append(s->group_calls, &zero, 1);
}

static void checkpoint_past_end(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_array_index(s->checkpoints, uint64_t, s->checkpoints->len - 1) = stream_size(s->stream) - 4;
}

static void checkpoints_out_of_order(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    uint64_t first = g_array_index(s->checkpoints, uint64_t, 0);
    g_array_append_val(s->checkpoints, first);
}

static void leak_bit_flipped(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    s->leak_bits->data[0] ^= 1;
}

static void leak_bit_past_last_call(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_assert_cmpuint(s->call_count % 8, !=, 0);
    s->leak_bits->data[s->leak_bits->len - 1] |= 0x80;
    s->leak_count++;
}

static void pair_code_past_last_call(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_assert_cmpuint(s->call_count * SPRT_PAIR_BITS % 8, !=, 0);
    s->pair_codes->data[s->pair_codes->len - 1] |= 0x80;
}

static void pair_codes_short(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_byte_array_set_size(s->pair_codes, s->pair_codes->len - 1);
}

/* Codes naming no saved pair name: the events would read past the table. */
static void pair_names_cleared(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_assert_cmpuint(s->pair_names->len, >, 0);
    g_ptr_array_set_size(s->pair_names, 0);
}

static void escape_name_past_names(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_assert_cmpuint(s->pair_escapes->len, >, 1);
    g_array_index(s->pair_escapes, struct sprt_pair_escape, 0).name = s->pair_names->len;
}

/* A call of code SPRT_PAIR_ESCAPED without its escape. */
static void escape_missing(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_array_remove_index(s->pair_escapes, 0);
}

static void escapes_out_of_order(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    struct sprt_pair_escape *e = &g_array_index(s->pair_escapes, struct sprt_pair_escape, 0);
    struct sprt_pair_escape first = e[0];
    e[0] = e[1];
    e[1] = first;
}

/* An escape at a call whose code is not SPRT_PAIR_ESCAPED. */
static void escape_at_coded_call(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    uint32_t i = 0;
    while (sprt_pair_code(s, i) == SPRT_PAIR_ESCAPED || sprt_pair_code(s, i) == SPRT_PAIR_NONE)
        i++;
    g_assert_cmpuint(i, <, g_array_index(s->pair_escapes, struct sprt_pair_escape, 0).call);
    g_array_index(s->pair_escapes, struct sprt_pair_escape, 0).call = i;
}

static void pair_names_too_many(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    while (s->pair_names->len <= LIMIT_SPRT_PAIR_NAMES)
        g_ptr_array_add(s->pair_names, g_strdup("malloc"));
}

static void pair_name_too_long(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_ptr_array_add(s->pair_names, g_strnfill(LIMIT_SPRT_PAIR_NAME_BYTES + 1, 'm'));
}

static void resource_past_end(struct trace *trace)
{
    struct sprt_state *s = trace->format_state;
    g_array_index(s->resources, struct sprt_resource, 0).offset = stream_size(s->stream) + 1;
}

static void test_sprtrace_broken_groups(void)
{
    if (format_missing("sp-rtrace"))
        return;
    GByteArray *good = saved_state("sp-rtrace", SPRTRACE_SAMPLE, NULL);
    g_assert_true(state_loads("sp-rtrace", SPRTRACE_SAMPLE, good));
    g_byte_array_free(good, TRUE);
    void (*breakers[])(struct trace *) = {
        group_without_calls, group_call_past_end, group_starts_at_freed_call, group_list_too_short,
        group_gap_zero, checkpoint_past_end, checkpoints_out_of_order, leak_bit_flipped,
        leak_bit_past_last_call, pair_code_past_last_call, pair_codes_short, pair_names_cleared,
        escape_name_past_names, escape_missing, escapes_out_of_order, escape_at_coded_call,
        pair_names_too_many, pair_name_too_long, resource_past_end,
    };
    for (size_t i = 0; i < G_N_ELEMENTS(breakers); i++) {
        GByteArray *state = saved_state("sp-rtrace", SPRTRACE_SAMPLE, breakers[i]);
        g_assert_false(state_loads("sp-rtrace", SPRTRACE_SAMPLE, state));
        g_byte_array_free(state, TRUE);
    }
}
#endif

/* ---- rr ---- */
#define RR_SAMPLE SAMPLE("rr/mtdemo-0")
/* rr_saved.c's layout: the block tables of the events and data files
 * (rr_tables_bytes), then seven header words, per checkpoint six words,
 * per thread three, per mmap one.  The tests of the header and what
 * follows break a state without the block tables (rr_good_state), which
 * expect_rr_rejected puts back. */
enum { RR_EVENTS_SIZE, RR_FRAMES, RR_CHECKPOINTS, RR_WITH_WRITES, RR_THREADS, RR_OWNERS, RR_INITIAL_EXEC,
       RR_HEADER_WORDS };
enum { CP_OFFSET, CP_DATA_OFFSET, CP_WRITES_MASK, CP_WRITES_BEFORE, CP_JOINED_BEFORE, CP_JOINED_MASK, CP_WORDS };
enum { THREAD_TID, THREAD_FIRST, THREAD_LAST, THREAD_WORDS };

static uint64_t word(const GByteArray *state, size_t index)
{
    uint64_t value;
    memcpy(&value, state->data + index * 8, sizeof value);
    return value;
}

static void set_word(GByteArray *state, size_t index, uint64_t value)
{
    memcpy(state->data + index * 8, &value, sizeof value);
}

static size_t rr_checkpoint(uint64_t which)
{
    return RR_HEADER_WORDS + CP_WORDS * which;
}

static size_t rr_first_thread(const GByteArray *state)
{
    return rr_checkpoint(word(state, RR_CHECKPOINTS));
}

static size_t rr_first_owner(const GByteArray *state)
{
    return rr_first_thread(state) + THREAD_WORDS * word(state, RR_THREADS);
}

/* Per file a flag word, and with it the codec, the count and seven words
 * per block (saved_stream.c; rr's blocks keep no window). */
enum { TABLE_FLAG, TABLE_CODEC, TABLE_COUNT, BLOCK_FILE_OFFSET, BLOCK_STREAM_OFFSET, BLOCK_COMPRESSED, BLOCK_SIZE };
#define BLOCK_WORDS 7u

static size_t rr_tables_bytes(const GByteArray *state)
{
    size_t at = 0;
    for (int file = 0; file < 2; file++) {
        uint64_t flag = word(state, at / 8);
        at += 8;
        if (flag)
            at += 16 + 8 * BLOCK_WORDS * word(state, at / 8 + 1);
    }
    g_assert_cmpuint(at, <=, state->len);
    return at;
}

static GByteArray *rr_tables;   /* the sample's block tables */

static GByteArray *rr_good_state(void)
{
    GByteArray *state = saved_state("rr", RR_SAMPLE, NULL);
    size_t tables = rr_tables_bytes(state);
    if (!rr_tables) {
        rr_tables = g_byte_array_new();
        g_byte_array_append(rr_tables, state->data, (guint)tables);
    }
    g_byte_array_remove_range(state, 0, (guint)tables);
    return state;
}

static GByteArray *copy_of(const GByteArray *state)
{
    GByteArray *copy = g_byte_array_new();
    g_byte_array_append(copy, state->data, state->len);
    return copy;
}

/* Takes `state`, which must not load (with the block tables put back
 * when `tables`). */
static void expect_state_rejected(GByteArray *state, gboolean tables, const char *what)
{
    if (tables)
        g_byte_array_prepend(state, rr_tables->data, rr_tables->len);
    if (state_loads("rr", RR_SAMPLE, state))
        g_error("rr: a saved state with %s loaded", what);
    g_byte_array_free(state, TRUE);
}

static void expect_rr_rejected(GByteArray *state, const char *what)
{
    expect_state_rejected(state, TRUE, what);
}

static void expect_word_rejected(const GByteArray *good, size_t index, uint64_t value, const char *what)
{
    GByteArray *state = copy_of(good);
    set_word(state, index, value);
    expect_rr_rejected(state, what);
}

/* The block tables: a table that does not fit its file, or a flag that is
 * neither 0 nor 1, and the state does not load. */
static void test_rr_broken_block_tables(void)
{
    if (format_missing("rr"))
        return;
    GByteArray *good = saved_state("rr", RR_SAMPLE, NULL);
    g_assert_cmpuint(word(good, TABLE_FLAG), ==, 1);
    g_assert_cmpuint(word(good, TABLE_COUNT), >, 0);
    GByteArray *state = copy_of(good);
    g_assert_true(state_loads("rr", RR_SAMPLE, state));
    g_byte_array_free(state, TRUE);
    const struct {
        size_t index;
        uint64_t value;
        const char *what;
    } cases[] = {
        { TABLE_FLAG, 2, "a block table flag of 2" },
        { TABLE_COUNT, 0, "an events table of no block" },
        { TABLE_COUNT, word(good, TABLE_COUNT) + 1, "a block counted but missing" },
        { BLOCK_COMPRESSED, (uint64_t)1 << 31, "a block past the end of the events file" },
        { BLOCK_STREAM_OFFSET, 1, "a first block not at the stream's start" },
        { BLOCK_SIZE, 0, "an empty block" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        state = copy_of(good);
        set_word(state, cases[i].index, cases[i].value);
        expect_state_rejected(state, FALSE, cases[i].what);
    }
    g_byte_array_free(good, TRUE);
}

static void test_rr_broken_header(void)
{
    if (format_missing("rr"))
        return;
    GByteArray *good = rr_good_state();
    expect_word_rejected(good, RR_EVENTS_SIZE, word(good, RR_EVENTS_SIZE) + 1, "another events size");
    expect_word_rejected(good, RR_FRAMES, (uint64_t)LIMIT_RR_FRAMES + 1, "frames over the limit");
    expect_word_rejected(good, RR_CHECKPOINTS, word(good, RR_CHECKPOINTS) + 1, "a checkpoint too many");
    expect_word_rejected(good, RR_WITH_WRITES, word(good, RR_WITH_WRITES) + 1, "a frame with writes too many");
    expect_word_rejected(good, RR_THREADS, 0, "frames but no thread");
    expect_word_rejected(good, RR_OWNERS, (uint64_t)LIMIT_RR_SIDE_RECORDS + 1, "owners over the limit");
    expect_word_rejected(good, RR_INITIAL_EXEC, word(good, RR_FRAMES) + 1, "an initial exec past the frames");
    g_byte_array_free(good, TRUE);
}

static void test_rr_broken_checkpoints(void)
{
    if (format_missing("rr"))
        return;
    GByteArray *good = rr_good_state();
    uint64_t checkpoints = word(good, RR_CHECKPOINTS), frames = word(good, RR_FRAMES);
    g_assert_cmpuint(checkpoints, >, 1);
    size_t first = rr_checkpoint(0), second = rr_checkpoint(1), last = rr_checkpoint(checkpoints - 1);
    expect_word_rejected(good, first + CP_OFFSET, 8, "a first checkpoint past the start");
    expect_word_rejected(good, first + CP_WRITES_BEFORE, 1, "writes before the first checkpoint");
    expect_word_rejected(good, second + CP_OFFSET, word(good, first + CP_OFFSET), "checkpoints not moving on");
    expect_word_rejected(good, second + CP_OFFSET, word(good, RR_EVENTS_SIZE), "a checkpoint past the events");
    /* A writes bit for a frame after the last, counted so only the mask is wrong. */
    uint64_t frames_in_last = frames - (checkpoints - 1) * LIMIT_RR_FRAME_CHECKPOINT;
    g_assert_cmpuint(frames_in_last, <, 64);
    GByteArray *state = copy_of(good);
    set_word(state, last + CP_WRITES_MASK, word(good, last + CP_WRITES_MASK) | (uint64_t)1 << frames_in_last);
    set_word(state, RR_WITH_WRITES, word(good, RR_WITH_WRITES) + 1);
    expect_rr_rejected(state, "writes of a frame past the last");
    /* The joined exits the common files' cuts count on. */
    expect_word_rejected(good, first + CP_JOINED_BEFORE, 1, "joined exits before the first checkpoint");
    expect_word_rejected(good, second + CP_JOINED_BEFORE, LIMIT_RR_FRAME_CHECKPOINT + 1,
                         "more joined exits than frames");
    expect_word_rejected(good, last + CP_JOINED_MASK, (uint64_t)1 << frames_in_last,
                         "a joined exit past the last frame");
    g_byte_array_free(good, TRUE);
}

static void test_rr_broken_threads(void)
{
    if (format_missing("rr"))
        return;
    GByteArray *good = rr_good_state();
    g_assert_cmpuint(word(good, RR_THREADS), >, 1);
    size_t first = rr_first_thread(good), second = first + THREAD_WORDS;
    expect_word_rejected(good, first + THREAD_TID, (uint64_t)UINT32_MAX + 1, "a tid over 32 bits");
    expect_word_rejected(good, second + THREAD_TID, word(good, first + THREAD_TID), "a tid twice");
    expect_word_rejected(good, first + THREAD_FIRST, 1, "no thread at frame 0");
    expect_word_rejected(good, first + THREAD_LAST, word(good, RR_FRAMES), "a thread past the last frame");
    expect_word_rejected(good, second + THREAD_FIRST, 0, "threads out of order");
    g_byte_array_free(good, TRUE);
}

static void test_rr_broken_owners(void)
{
    if (format_missing("rr"))
        return;
    GByteArray *good = rr_good_state();
    g_assert_cmpuint(word(good, RR_OWNERS), >, 0);
    expect_word_rejected(good, rr_first_owner(good), (uint64_t)1 << 33, "an owner word past bit 32");
    /* Owners are per mmap: one more, counted and present, is one too many. */
    GByteArray *state = copy_of(good);
    set_word(state, RR_OWNERS, word(good, RR_OWNERS) + 1);
    uint64_t no_owner = 0;
    g_byte_array_append(state, (const guint8 *)&no_owner, sizeof no_owner);
    expect_rr_rejected(state, "an owner too many");
    g_byte_array_free(good, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    index_dir = g_dir_make_tmp("tracefs-saved-reject-XXXXXX", NULL);
    g_assert_nonnull(index_dir);
#ifdef TRACEFS_FORMAT_FXT
    static const struct sample fxt = { "fxt", FXT_SAMPLE };
    g_test_add_data_func("/saved-state/fxt/length", &fxt, test_length);
    g_test_add_func("/saved-state/fxt/broken-tables", test_fxt_broken_tables);
#endif
#ifdef TRACEFS_FORMAT_SPRTRACE
    g_test_add_func("/saved-state/sp-rtrace/broken-tables", test_sprtrace_broken_groups);
#endif
    static const struct sample rr = { "rr", RR_SAMPLE };
    g_test_add_data_func("/saved-state/rr/length", &rr, test_length);
    g_test_add_func("/saved-state/rr/broken-header", test_rr_broken_header);
    g_test_add_func("/saved-state/rr/broken-checkpoints", test_rr_broken_checkpoints);
    g_test_add_func("/saved-state/rr/broken-threads", test_rr_broken_threads);
    g_test_add_func("/saved-state/rr/broken-owners", test_rr_broken_owners);
    g_test_add_func("/saved-state/rr/broken-block-tables", test_rr_broken_block_tables);
    int rc = g_test_run();
    if (rr_tables)
        g_byte_array_free(rr_tables, TRUE);
    g_rmdir(index_dir);
    g_free(index_dir);
    return rc;
}
