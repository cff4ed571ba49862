/* The persistent index of an sp-rtrace log: the call checkpoints, the leak
 * bits, the pair codes and names, the named tables and the leak groups, so
 * that a remount skips the packet scan.
 * The environment text is rendered again from what is loaded, and every
 * saved offset and index is checked like log data. */
#include "saved_bytes.h"
#include "sprtrace.h"
#include "stream.h"
#include "trace.h"
#include "tracefs_limits.h"

#define SAVED_STRING_MAX (1u << 20)

/* struct sprt_log has no padding of the compiler's: every byte saved is a field's. */
G_STATIC_ASSERT(sizeof(struct sprt_log) == 104);

static void put_header(struct saved_writer *out, const struct sprt_state *s)
{
    uint64_t counts[] = { s->trace_count, s->call_count, s->leak_count };
    saved_put(out, &s->log, sizeof s->log);
    saved_put(out, counts, sizeof counts);
    saved_put_string(out, s->arch);
    saved_put_string(out, s->process);
}

static gboolean get_header(struct saved_reader *r, struct sprt_state *s)
{
    uint64_t counts[3];
    saved_take(r, &s->log, sizeof s->log);
    saved_take(r, counts, sizeof counts);
    s->trace_count = (uint32_t)counts[0];
    s->call_count = (uint32_t)counts[1];
    s->leak_count = counts[2];
    s->arch = saved_get_string(r, SAVED_STRING_MAX);
    s->process = saved_get_string(r, SAVED_STRING_MAX);
    return !r->bad && (s->log.pointer_size == 4 || s->log.pointer_size == 8) && s->log.have_pinfo && s->arch &&
           counts[0] <= LIMIT_SPRT_CALLS && counts[1] <= LIMIT_SPRT_CALLS && counts[2] <= counts[1];
}

/* Per table its count, then per entry its numbers, its name's bytes and
 * its string (sprt_tables). */
static void put_tables(struct saved_writer *out, const struct sprt_state *s)
{
    for (unsigned t = 0; t < SPRT_TABLES; t++) {
        const struct sprt_table *table = &sprt_tables[t];
        const GArray *array = s->tables[t];
        saved_put_u64(out, array->len);
        for (guint i = 0; i < array->len; i++) {
            char *entry = array->data + i * table->entry_size;
            for (unsigned k = 0; k < G_N_ELEMENTS(table->numbers) && table->numbers[k].bytes; k++)
                saved_put_u64(out, table->numbers[k].bytes == 4 ? *(uint32_t *)(entry + table->numbers[k].at)
                                                                : *(uint64_t *)(entry + table->numbers[k].at));
            if (table->name != SPRT_NO_FIELD)
                saved_put_bytes(out, *sprt_entry_string(entry, table->name),
                                *(size_t *)(entry + table->name_len));
            if (table->string != SPRT_NO_FIELD)
                saved_put_string(out, *sprt_entry_string(entry, table->string));
        }
    }
}

/* A saved entry into the zeroed one; FALSE when a string is missing. */
static gboolean get_entry(struct saved_reader *r, const struct sprt_table *table, char *entry)
{
    for (unsigned k = 0; k < G_N_ELEMENTS(table->numbers) && table->numbers[k].bytes; k++) {
        uint64_t number = saved_get_u64(r);
        if (table->numbers[k].bytes == 4)
            *(uint32_t *)(entry + table->numbers[k].at) = (uint32_t)number;
        else
            *(uint64_t *)(entry + table->numbers[k].at) = number;
    }
    char **name = sprt_entry_string(entry, table->name), **string = sprt_entry_string(entry, table->string);
    if (name && !(*name = saved_get_name(r, SAVED_STRING_MAX, (size_t *)(entry + table->name_len))))
        return FALSE;
    return !string || (*string = saved_get_string(r, SAVED_STRING_MAX)) != NULL;
}

/* A table's length is bounded as the index pass bounds it, and by the
 * bytes left (an entry takes two words at least).  Each entry goes into
 * its array before it is read, so that the state's free function owns
 * whatever strings a bad buffer left half read. */
static gboolean get_tables(struct saved_reader *r, struct sprt_state *s)
{
    for (unsigned t = 0; t < SPRT_TABLES; t++) {
        GArray *array = s->tables[t];
        guint n = (guint)saved_get_count(r, 2 * sizeof(uint64_t), LIMIT_SPRT_TABLE_ENTRIES);
        for (guint i = 0; i < n && !r->bad; i++) {
            g_array_set_size(array, array->len + 1);
            char *entry = array->data + (array->len - 1) * sprt_tables[t].entry_size;
            if (!get_entry(r, &sprt_tables[t], entry))
                r->bad = TRUE;
        }
    }
    return !r->bad;
}

static uint32_t checkpoint_count(uint32_t calls)
{
    return calls / SPRT_CALLS_PER_CHECKPOINT + (calls % SPRT_CALLS_PER_CHECKPOINT != 0);
}

/* Each checkpoint a packet header inside the file, in file order. */
static gboolean checkpoints_valid(const struct sprt_state *s, uint64_t file_size)
{
    if (s->checkpoints->len != checkpoint_count(s->call_count))
        return FALSE;
    for (guint i = 0; i < s->checkpoints->len; i++) {
        uint64_t at = g_array_index(s->checkpoints, uint64_t, i);
        if (at > file_size || file_size - at < 8 ||
            (i > 0 && at <= g_array_index(s->checkpoints, uint64_t, i - 1)))
            return FALSE;
    }
    return TRUE;
}

/* One bit per call, none past the last, as many set as the header says. */
static gboolean leak_bits_valid(const struct sprt_state *s)
{
    if (s->leak_bits->len != (s->call_count + 7) / 8)
        return FALSE;
    uint64_t set = 0;
    for (guint i = 0; i < s->leak_bits->len; i++)
        set += (uint64_t)__builtin_popcount(s->leak_bits->data[i]);
    if (s->call_count % 8 && s->leak_bits->data[s->leak_bits->len - 1] >> (s->call_count % 8))
        return FALSE;
    return set == s->leak_count;
}

/* SPRT_PAIR_BITS per call, none past the last, each code naming a saved
 * pair name, an escape or the resource type; the escapes exactly the calls
 * of code SPRT_PAIR_ESCAPED, in call order, each naming a saved name, no
 * more than the index pass keeps for the file. */
static gboolean pair_codes_valid(const struct sprt_state *s, uint64_t file_size)
{
    uint64_t bits = (uint64_t)s->call_count * SPRT_PAIR_BITS;
    if (s->pair_codes->len != SPRT_PAIR_CODE_BYTES(s->call_count))
        return FALSE;
    if (bits % 8 && s->pair_codes->data[s->pair_codes->len - 1] >> (bits % 8))
        return FALSE;
    if (s->pair_escapes->len > sprt_pair_escape_limit(file_size))
        return FALSE;
    uint64_t escaped = 0;
    for (uint32_t i = 0; i < s->call_count; i++) {
        uint8_t code = sprt_pair_code(s, i);
        if (code > s->pair_names->len && code <= SPRT_PAIR_CODED_NAMES)
            return FALSE;
        escaped += code == SPRT_PAIR_ESCAPED;
    }
    if (escaped != s->pair_escapes->len)
        return FALSE;
    for (guint i = 0; i < s->pair_escapes->len; i++) {
        const struct sprt_pair_escape *e = &g_array_index(s->pair_escapes, struct sprt_pair_escape, i);
        if (e->call >= s->call_count || e->name >= s->pair_names->len ||
            sprt_pair_code(s, e->call) != SPRT_PAIR_ESCAPED ||
            (i > 0 && e->call <= g_array_index(s->pair_escapes, struct sprt_pair_escape, i - 1).call))
            return FALSE;
    }
    return TRUE;
}

static void put_pair_names(struct saved_writer *out, const struct sprt_state *s)
{
    saved_put_u64(out, s->pair_names->len);
    for (guint i = 0; i < s->pair_names->len; i++)
        saved_put_string(out, g_ptr_array_index(s->pair_names, i));
}

/* As many as the index pass keeps, each as long as it keeps. */
static gboolean get_pair_names(struct saved_reader *r, struct sprt_state *s)
{
    uint64_t count = saved_get_u64(r);
    if (r->bad || count > LIMIT_SPRT_PAIR_NAMES)
        return FALSE;
    for (uint64_t i = 0; i < count; i++) {
        char *name = saved_get_string(r, LIMIT_SPRT_PAIR_NAME_BYTES);
        if (!name)
            return FALSE;
        g_ptr_array_add(s->pair_names, name);
    }
    return TRUE;
}

/* Every group's calls are leaked calls in increasing order, and the groups
 * together list no more calls than are leaked (which bounds this check).
 * The scan makes a group only for a trace with a leak: an empty one would
 * have `leaks-compressed` print the frames of no call. */
static gboolean groups_valid(const struct sprt_state *s)
{
    uint64_t listed = 0;
    for (guint i = 0; i < s->groups->len; i++) {
        const struct sprt_group *g = &g_array_index(s->groups, struct sprt_group, i);
        if (g->trace >= s->trace_count || g->leak_count < 1 || !sprt_is_leak(s, g->first_call) ||
            g->list_offset > s->group_calls->len)
            return FALSE;
        listed += (uint64_t)g->leak_count;
        if (listed > s->leak_count)
            return FALSE;
        uint64_t pos = g->list_offset, index = g->first_call;
        for (int32_t n = 1; n < g->leak_count; n++)
            if (!sprt_group_next(s, &pos, &index) || !sprt_is_leak(s, (uint32_t)index))
                return FALSE;
    }
    return TRUE;
}

static gboolean resources_valid(const struct sprt_state *s, uint64_t file_size)
{
    for (guint i = 0; i < s->resources->len; i++)
        if (g_array_index(s->resources, struct sprt_resource, i).offset > file_size)
            return FALSE;
    return TRUE;
}

static gboolean get_bytes(struct saved_reader *r, GByteArray *out, uint64_t max_length)
{
    size_t length;
    const char *bytes = saved_get_bytes(r, (size_t)max_length, &length);
    if (!bytes)
        return FALSE;
    g_byte_array_append(out, (const uint8_t *)bytes, (guint)length);
    return TRUE;
}

int sprt_save(struct trace *trace, struct saved_writer *out)
{
    const struct sprt_state *s = trace->format_state;
    if (!s)
        return -1;
    put_header(out, s);
    put_tables(out, s);
    saved_put_array(out, s->checkpoints);
    saved_put_bytes(out, s->leak_bits->data, s->leak_bits->len);
    put_pair_names(out, s);
    saved_put_bytes(out, s->pair_codes->data, s->pair_codes->len);
    saved_put_array(out, s->pair_escapes);
    saved_put_array(out, s->groups);
    saved_put_bytes(out, s->group_calls->data, s->group_calls->len);
    saved_put_gstring(out, s->leak_summary);
    return 0;
}

int sprt_load(struct trace *trace, const uint8_t *data, size_t size)
{
    struct sprt_state *s = sprt_state_new(trace);
    if (!s->stream)
        return -1;
    struct saved_reader r;
    saved_reader_init_mapped(&r, data, size);
    /* A gap takes at most five bytes (calls are below 2^28). */
    if (!get_header(&r, s) || !get_tables(&r, s) ||
        !saved_get_array(&r, s->checkpoints, checkpoint_count(s->call_count)) ||
        !get_bytes(&r, s->leak_bits, (s->call_count + 7) / 8) ||
        !get_pair_names(&r, s) || !get_bytes(&r, s->pair_codes, SPRT_PAIR_CODE_BYTES(s->call_count)) ||
        !saved_get_array(&r, s->pair_escapes, LIMIT_SPRT_PAIR_ESCAPES) ||
        !saved_get_array(&r, s->groups, s->trace_count) || !get_bytes(&r, s->group_calls, s->leak_count * 5))
        return -1;
    s->leak_summary = saved_get_gstring(&r, (size_t)LIMIT_SPRT_TABLE_ENTRIES * 2 * SAVED_STRING_MAX);
    uint64_t file_size = stream_size(s->stream);
    if (!saved_reader_done(&r) || !s->leak_summary || !checkpoints_valid(s, file_size) || !leak_bits_valid(s) ||
        !pair_codes_valid(s, file_size) || !groups_valid(s) || !resources_valid(s, file_size))
        return -1;
    for (guint i = 0; i < s->resources->len; i++)
        sprt_link_resource(s, i);
    return 0;
}
