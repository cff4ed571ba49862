/* Signatures: function, enum, bitmask, struct and backtrace-frame
 * definitions, defined at first use and referenced by id afterwards. */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "keyed_hash.h"
#include "apitrace.h"
#include "sorted_search.h"
#include "trace.h"
#include "tracefs_limits.h"

struct flag_entry { const char *name; uint32_t flags; };
static const struct flag_entry flag_table[] = {
#include "apitrace_flags_table.inc"
};

static int compare_flag_entry(const void *key, const void *entry)
{
    return strcmp(key, ((const struct flag_entry *)entry)->name);
}

/* Families of names apitrace flags by pattern before its table, in the
 * order it tries them (each matches only names of its own API's prefix). */
struct name_pattern { const char *regex; uint32_t flags; };
static const struct name_pattern patterns[] = {
    { "^gl([A-Z][a-z]+)*Draw(Range|Mesh)?(Arrays|Elements)([A-Z][a-zA-Z]*)?$", AT_FLAG_RENDER },
    { "^gl(CallLists?|Clear|End|DrawPixels|DrawTransformFeedback([A-Z][a-zA-Z]*)?|BlitFramebuffer|"
      "Rect[dfis]v?|EvalMesh[0-9]+)[0-9A-Z]*$", AT_FLAG_RENDER },
    { "^glBindFramebuffer[0-9A-Z]*$", AT_FLAG_SWAP_RENDERTARGET },
    { "^gl(GetFloat|GetInteger|GetVertexAttrib|GetTex(ture)?(Level)?Parameter)\\w+$", AT_FLAG_NO_SIDE_EFFECTS },
    { "^ID3D1(0Device|1DeviceContext)\\d*::(Draw\\w*|ExecuteCommandList)$", AT_FLAG_RENDER },
    { "^ID3D1(0Device|1DeviceContext)\\d*::OMSetRenderTargets\\w*$", AT_FLAG_SWAP_RENDERTARGET },
    { "^IDXGI(Decode)?SwapChain\\w*::Present\\w*$", AT_FLAG_END_FRAME },
    { "^ID3D1[01]Device\\d*::(CheckFormatSupport|CheckMultisampleQualityLevels)$",
      AT_FLAG_NO_SIDE_EFFECTS | AT_FLAG_VERBOSE },
};

/* Compiled once; GRegex matching is safe from many threads. */
static GRegex **compiled_patterns(void)
{
    static GRegex *regexes[G_N_ELEMENTS(patterns)];
    static gsize ready = 0;
    if (g_once_init_enter(&ready)) {
        for (size_t i = 0; i < G_N_ELEMENTS(patterns); i++)
            regexes[i] = g_regex_new(patterns[i].regex, G_REGEX_OPTIMIZE, 0, NULL);
        g_once_init_leave(&ready, 1);
    }
    return regexes;
}

static gboolean pattern_flags(const char *name, uint32_t *flags)
{
    GRegex **regexes = compiled_patterns();
    if (name[0] != 'g' && name[0] != 'I')
        return FALSE;
    for (size_t i = 0; i < G_N_ELEMENTS(patterns); i++) {
        if (regexes[i] && g_regex_match(regexes[i], name, 0, NULL)) {
            *flags = patterns[i].flags;
            return TRUE;
        }
    }
    return FALSE;
}

static uint32_t at_lookup_call_flags(const char *name)
{
    uint32_t flags;
    if (g_utf8_validate(name, -1, NULL) && pattern_flags(name, &flags))
        return flags;
    const struct flag_entry *entry = bsearch(name, flag_table, G_N_ELEMENTS(flag_table),
                                             sizeof flag_table[0], compare_flag_entry);
    return entry ? entry->flags : 0;
}

/* What the allocator spends on a kept string or block besides its bytes. */
#define KEPT_OVERHEAD 32u

/* Counts `bytes` more kept by the index; FALSE (and over_budget) when they
 * pass the table budget. */
static gboolean at_keep(struct at_state *state, uint64_t bytes)
{
    state->kept_bytes += bytes;
    if (state->kept_bytes <= state->table_budget)
        return TRUE;
    state->over_budget = TRUE;
    return FALSE;
}

/* A string of a definition, counted against the table budget twice: the
 * tree's texts (signatures/, functions/) hold it again. */
static char *kept_string(struct at_state *state, struct at_reader *reader, size_t *length)
{
    size_t kept = 0;
    char *s = at_string(reader, &kept);
    if (length)
        *length = kept;
    if (s && !at_keep(state, 2 * (kept + 1) + KEPT_OVERHEAD)) {
        g_free(s);
        return NULL;
    }
    return s;
}

static char **read_names(struct at_state *state, struct at_reader *reader, uint64_t count)
{
    if (!at_keep(state, (count + 1) * sizeof(char *) + KEPT_OVERHEAD))
        return NULL;
    char **names = g_new0(char *, count + 1);
    for (uint64_t i = 0; i < count; i++) {
        names[i] = kept_string(state, reader, NULL);
        if (!names[i]) {
            g_strfreev(names);
            return NULL;
        }
    }
    return names;
}

static gboolean sane_count(struct at_reader *reader, uint64_t count)
{
    return count <= LIMIT_APITRACE_SIG_ENTRIES && count <= at_bytes_left(reader);
}

void *at_id_map_get(const struct at_id_map *map, uint64_t id)
{
    if (id < map->dense->len)
        return map->dense->pdata[id];
    return id < LIMIT_APITRACE_DENSE_IDS ? NULL : g_hash_table_lookup(map->all, &id);
}

void at_id_map_put(struct at_id_map *map, uint64_t id, void *sig)
{
    g_hash_table_replace(map->all, g_memdup2(&id, sizeof id), sig);
    if (id >= LIMIT_APITRACE_DENSE_IDS)
        return;
    if (id >= map->dense->len)
        g_ptr_array_set_size(map->dense, (guint)id + 1);
    map->dense->pdata[id] = sig;
}

static void id_map_init(struct at_id_map *map, GDestroyNotify free_sig)
{
    map->all = g_hash_table_new_full(keyed_hash_int64, g_int64_equal, g_free, free_sig);
    map->dense = g_ptr_array_new();
}

static void id_map_free(struct at_id_map *map)
{
    g_clear_pointer(&map->all, g_hash_table_destroy);
    g_clear_pointer(&map->dense, g_ptr_array_unref);
}

static const char *at_api_of(const char *n)
{
    if (g_str_has_prefix(n, "glX") || g_str_has_prefix(n, "CGL") ||
        (g_str_has_prefix(n, "wgl") && g_ascii_isupper(n[3])))
        return "OpenGL + GLX/WGL/CGL";
    if (g_str_has_prefix(n, "egl") && g_ascii_isupper(n[3]))
        return "OpenGL/GLES1/GLES2/VG + EGL";
    if (g_str_has_prefix(n, "Direct") || g_str_has_prefix(n, "D3D") || g_str_has_prefix(n, "Create"))
        return "DirectX";
    return NULL;
}

/* A name (its length in *name_len) and a counted list of names: a
 * function's arguments, a struct's members.  FALSE: nothing is kept (the
 * signature being made is dropped). */
static gboolean read_named_list(struct at_state *state, struct at_reader *reader, char **name, size_t *name_len,
                                char ***names, uint32_t *count)
{
    uint64_t n;
    *name = kept_string(state, reader, name_len);
    if (*name && at_uint(reader, &n) && sane_count(reader, n) && (*names = read_names(state, reader, n))) {
        *count = (uint32_t)n;          /* sane_count keeps it within LIMIT_APITRACE_SIG_ENTRIES */
        return TRUE;
    }
    g_free(*name);
    return FALSE;
}

/* A signature met again at its own definition (a view re-reading a call
 * from a checkpoint): the definition's bytes were checked when it was first
 * read and the stream gives the same bytes, so the reader jumps past them
 * rather than parse them again (GLenum's definition alone is thousands of
 * names, crossed by every scan of every view). */
static gboolean skip_definition_again(struct at_reader *reader, uint64_t def_end)
{
    uint64_t at = at_reader_offset(reader);
    return at >= def_end || at_skip(reader, def_end - at);
}

void at_add_function(struct at_state *state, struct at_function *sig)
{
    sig->flags = at_lookup_call_flags(sig->name);
    sig->index = state->functions->len;
    g_ptr_array_add(state->functions, sig);
    at_id_map_put(&state->function_ids, sig->id, sig);
    if (!state->api)
        state->api = at_api_of(sig->name);
}

struct at_function *at_function_sig(struct at_state *state, struct at_reader *reader, gboolean define)
{
    uint64_t id;
    if (!at_uint(reader, &id))
        return NULL;
    struct at_function *sig = at_id_map_get(&state->function_ids, id);
    if (sig)
        return skip_definition_again(reader, sig->def_end) ? sig : NULL;
    if (!define || !at_keep(state, sizeof *sig + 2 * KEPT_OVERHEAD + LIMIT_APITRACE_FUNCTION_TREE_BYTES))
        return NULL;
    sig = g_new0(struct at_function, 1);
    if (!read_named_list(state, reader, &sig->name, &sig->name_len, &sig->arg_names, &sig->arg_count)) {
        g_free(sig);
        return NULL;
    }
    sig->id = id;
    sig->def_end = at_reader_offset(reader);
    at_add_function(state, sig);
    return sig;
}

static void free_named_values(gpointer data)
{
    struct at_named_values *sig = data;
    for (uint32_t i = 0; sig->values && i < sig->count; i++)
        g_free(sig->values[i].name);
    g_free(sig->values);
    g_free(sig->by_value);
    g_free(sig->matchable_values);
    g_free(sig->matchable_positions);
    g_free(sig);
}

static int compare_value_positions(const void *a, const void *b)
{
    const struct at_value_position *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return (x->position > y->position) - (x->position < y->position);
}

/* The values with their positions, sorted by value, then position. */
static struct at_value_position *sorted_by_value(const struct at_named_values *sig)
{
    struct at_value_position *sorted = g_new(struct at_value_position, sig->count ? sig->count : 1);
    for (uint32_t i = 0; i < sig->count; i++)
        sorted[i] = (struct at_value_position){ sig->values[i].value, i };
    qsort(sorted, sig->count, sizeof *sorted, compare_value_positions);
    return sorted;
}

const char *at_enum_name(const struct at_named_values *sig, int64_t value)
{
    size_t at = sorted_count_below(sig->by_value, sig->count, sizeof *sig->by_value,
                                   offsetof(struct at_value_position, value), (uint64_t)value);
    if (at == sig->count || sig->by_value[at].value != (uint64_t)value)
        return NULL;
    return sig->values[sig->by_value[at].position].name;
}

static int compare_positions(const void *a, const void *b)
{
    const struct at_value_position *x = a, *y = b;
    return (x->position > y->position) - (x->position < y->position);
}

/* Keeps, of the flags sorted by value then position, the first of each
 * nonzero value; returns how many. */
static uint32_t keep_first_of_each_value(struct at_value_position *flags, uint32_t count)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (flags[i].value == 0 || (kept && flags[kept - 1].value == flags[i].value))
            continue;
        flags[kept++] = flags[i];
    }
    return kept;
}

uint32_t at_index_named_values(struct at_named_values *sig, gboolean is_enum)
{
    if (is_enum) {
        sig->by_value = sorted_by_value(sig);
        return 0;
    }
    struct at_value_position *flags = sorted_by_value(sig);
    uint32_t distinct = keep_first_of_each_value(flags, sig->count);
    qsort(flags, distinct, sizeof *flags, compare_positions);
    sig->matchable_count = MIN(distinct, LIMIT_APITRACE_BITMASK_FLAGS);
    sig->matchable_values = g_new(uint64_t, sig->matchable_count ? sig->matchable_count : 1);
    sig->matchable_positions = g_new(uint32_t, sig->matchable_count ? sig->matchable_count : 1);
    for (uint32_t i = 0; i < sig->matchable_count; i++) {
        sig->matchable_values[i] = flags[i].value;
        sig->matchable_positions[i] = flags[i].position;
    }
    g_free(flags);
    return distinct;
}

/* A bitmask of more distinct flags than are matched renders the bits of
 * the others in hex, where apitrace may name them: that is said once. */
static void note_unmatched_flags(struct at_state *state, const struct at_named_values *sig, uint32_t distinct)
{
    if (distinct <= sig->matchable_count)
        return;
    trace_error(state->trace, "stream", sig->def_end,
                "bitmask signature %" PRIu64 ": %" PRIu32 " distinct flag values, only the first %" PRIu32
                " are matched (LIMIT_APITRACE_BITMASK_FLAGS)",
                sig->id, distinct, sig->matchable_count);
}

struct at_named_values *at_named_values_sig(struct at_state *state, struct at_reader *reader, gboolean define,
                                            gboolean is_enum)
{
    struct at_id_map *map = is_enum ? &state->enums : &state->bitmasks;
    uint64_t id, count = 1;
    if (!at_uint(reader, &id))
        return NULL;
    struct at_named_values *sig = at_id_map_get(map, id);
    if (sig)
        return skip_definition_again(reader, sig->def_end) ? sig : NULL;
    if (!define)
        return NULL;
    gboolean counted = !is_enum || state->version >= 3;
    if (counted && (!at_uint(reader, &count) || !sane_count(reader, count)))
        return NULL;
    /* by_value pays for a bitmask's matchable flags too (12 bytes a flag). */
    if (!at_keep(state, sizeof *sig + (count + 1) * (sizeof *sig->values + sizeof *sig->by_value) +
                            4 * KEPT_OVERHEAD + LIMIT_APITRACE_SIGNATURE_TREE_BYTES))
        return NULL;
    sig = g_new0(struct at_named_values, 1);
    sig->id = id;
    sig->values = g_new0(struct at_named_value, count ? count : 1);
    for (uint64_t i = 0; i < count; i++) {
        struct at_named_value *v = &sig->values[i];
        v->name = kept_string(state, reader, NULL);
        sig->count = (uint32_t)(i + 1);
        if (!v->name || !(is_enum ? at_sint(reader, (int64_t *)&v->value) : at_uint(reader, &v->value))) {
            free_named_values(sig);
            return NULL;
        }
    }
    sig->def_end = at_reader_offset(reader);
    note_unmatched_flags(state, sig, at_index_named_values(sig, is_enum));
    at_id_map_put(map, id, sig);
    g_ptr_array_add(is_enum ? state->enum_list : state->bitmask_list, sig);
    return sig;
}

struct at_struct *at_struct_sig(struct at_state *state, struct at_reader *reader, gboolean define)
{
    uint64_t id;
    if (!at_uint(reader, &id))
        return NULL;
    struct at_struct *sig = at_id_map_get(&state->structs, id);
    if (sig)
        return skip_definition_again(reader, sig->def_end) ? sig : NULL;
    if (!define || !at_keep(state, sizeof *sig + 2 * KEPT_OVERHEAD + LIMIT_APITRACE_SIGNATURE_TREE_BYTES))
        return NULL;
    sig = g_new0(struct at_struct, 1);
    if (!read_named_list(state, reader, &sig->name, NULL, &sig->member_names, &sig->count)) {
        g_free(sig);
        return NULL;
    }
    sig->id = id;
    sig->def_end = at_reader_offset(reader);
    at_id_map_put(&state->structs, id, sig);
    g_ptr_array_add(state->struct_list, sig);
    return sig;
}

static void free_frame(struct at_frame *frame)
{
    g_free(frame->module);
    g_free(frame->function);
    g_free(frame->filename);
    g_free(frame);
}

/* Frame details up to the 0x00 terminator. */
static gboolean frame_details(struct at_state *state, struct at_reader *reader, struct at_frame *frame)
{
    for (;;) {
        int c = at_getc(reader);
        uint64_t value;
        char **slot = NULL;
        switch (c) {
        case 0x00: return TRUE;
        case 0x01: slot = &frame->module; break;
        case 0x02: slot = &frame->function; break;
        case 0x03: slot = &frame->filename; break;
        case 0x04:
        case 0x05:
            if (!at_uint(reader, &value))
                return FALSE;
            if (c == 0x04)
                frame->line = (int32_t)(uint32_t)value;
            else
                frame->offset = (int64_t)value;
            continue;
        default: return FALSE;
        }
        char *s = kept_string(state, reader, NULL);
        if (!s)
            return FALSE;
        g_free(*slot);
        *slot = s;
    }
}

struct at_frame *at_frame_sig(struct at_state *state, struct at_reader *reader, gboolean define)
{
    uint64_t id;
    if (!at_uint(reader, &id))
        return NULL;
    struct at_frame *frame = at_id_map_get(&state->frames, id);
    if (frame)
        return skip_definition_again(reader, frame->def_end) ? frame : NULL;
    if (!define || !at_keep(state, sizeof *frame + 2 * KEPT_OVERHEAD))
        return NULL;
    frame = g_new0(struct at_frame, 1);
    frame->id = id;
    frame->line = -1;
    frame->offset = -1;
    if (!frame_details(state, reader, frame)) {
        free_frame(frame);
        return NULL;
    }
    frame->def_end = at_reader_offset(reader);
    at_id_map_put(&state->frames, id, frame);
    return frame;
}

static void free_function(gpointer data)
{
    struct at_function *sig = data;
    g_free(sig->name);
    g_strfreev(sig->arg_names);
    g_free(sig);
}

static void free_struct(gpointer data)
{
    struct at_struct *sig = data;
    g_free(sig->name);
    g_strfreev(sig->member_names);
    g_free(sig);
}

void at_state_free_sigs(struct at_state *state)
{
    g_clear_pointer(&state->functions, g_ptr_array_unref);
    id_map_free(&state->function_ids);
    id_map_free(&state->enums);
    id_map_free(&state->bitmasks);
    id_map_free(&state->structs);
    id_map_free(&state->frames);
    g_clear_pointer(&state->enum_list, g_ptr_array_unref);
    g_clear_pointer(&state->bitmask_list, g_ptr_array_unref);
    g_clear_pointer(&state->struct_list, g_ptr_array_unref);
}

/* Frames are owned by their hash table (value destroy). */
void at_state_init_sigs(struct at_state *state)
{
    state->table_budget = limit_table_budget((uint64_t)state->trace->st.st_size);
    state->functions = g_ptr_array_new_with_free_func(free_function);
    id_map_init(&state->function_ids, NULL);
    id_map_init(&state->enums, NULL);
    id_map_init(&state->bitmasks, NULL);
    id_map_init(&state->structs, NULL);
    id_map_init(&state->frames, (GDestroyNotify)free_frame);
    state->enum_list = g_ptr_array_new_with_free_func(free_named_values);
    state->bitmask_list = g_ptr_array_new_with_free_func(free_named_values);
    state->struct_list = g_ptr_array_new_with_free_func(free_struct);
}
