/* Calls decoded again from the packets: a walk starts at the checkpoint
 * before a call and follows the index pass's rules for which ARGS and BTRC
 * packets belong to which CALL, so that nothing per call is kept. */
#include <stdlib.h>
#include "sorted_search.h"
#include "sprtrace.h"
#include "stream.h"
#include "text.h"
#include "trace.h"
#include "tracefs_limits.h"

void sprt_link_resource(struct sprt_state *state, uint32_t i)
{
    uint32_t id = g_array_index(state->resources, struct sprt_resource, i).id;
    uint32_t previous = SPRT_NONE;
    if (id <= LIMIT_SPRT_RESOURCE_ID) {
        previous = state->res_last[id];
        state->res_last[id] = i;
    }
    g_array_append_val(state->res_previous, previous);
}

uint32_t sprt_resource_at(const struct sprt_state *state, uint32_t res_type, uint64_t offset)
{
    if (res_type > LIMIT_SPRT_RESOURCE_ID)
        return SPRT_NONE;
    uint32_t i = state->res_last[res_type];
    while (i != SPRT_NONE && g_array_index(state->resources, struct sprt_resource, i).offset >= offset)
        i = g_array_index(state->res_previous, uint32_t, i);
    return i;
}

gboolean sprt_is_leak(const struct sprt_state *state, uint32_t index)
{
    return index < state->call_count && (state->leak_bits->data[index >> 3] >> (index & 7) & 1);
}

uint32_t sprt_next_leak(const struct sprt_state *state, uint32_t index)
{
    while (index < state->call_count) {
        uint8_t byte = state->leak_bits->data[index >> 3] >> (index & 7);
        if (byte)
            return index + (uint32_t)__builtin_ctz(byte);
        index = (index | 7) + 1;
    }
    return state->call_count;
}

uint8_t sprt_pair_code(const struct sprt_state *state, uint32_t index)
{
    uint64_t bit = (uint64_t)index * SPRT_PAIR_BITS;
    if (index >= state->call_count || bit / 8 >= state->pair_codes->len)
        return SPRT_PAIR_NONE;
    const uint8_t *bytes = state->pair_codes->data;
    uint64_t byte = bit / 8;
    unsigned word = bytes[byte] | (byte + 1 < state->pair_codes->len ? (unsigned)bytes[byte + 1] << 8 : 0);
    return (uint8_t)(word >> (bit % 8) & ((1u << SPRT_PAIR_BITS) - 1));
}

uint32_t sprt_pair_escape_limit(uint64_t file_size)
{
    return (uint32_t)MIN(LIMIT_SPRT_PAIR_ESCAPES,
                         LIMIT_SPRT_PAIR_ESCAPES_BASE + file_size / LIMIT_SPRT_PAIR_ESCAPE_SPACING);
}

const char *sprt_pair_name(const struct sprt_state *state, uint32_t index, uint8_t code)
{
    if (code >= 1 && code <= SPRT_PAIR_CODED_NAMES && code <= state->pair_names->len)
        return g_ptr_array_index(state->pair_names, code - 1);
    if (code != SPRT_PAIR_ESCAPED || !state->pair_escapes->len)
        return NULL;
    const struct sprt_pair_escape *found = bsearch(&index, state->pair_escapes->data, state->pair_escapes->len,
                                                   sizeof *found, sorted_compare_u32);
    return found && found->name < state->pair_names->len ? g_ptr_array_index(state->pair_names, found->name) : NULL;
}

/* The gap is a varint: seven bits a byte, low bits first. */
gboolean sprt_group_next(const struct sprt_state *state, uint64_t *pos, uint64_t *index)
{
    uint64_t gap = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*pos >= state->group_calls->len)
            return FALSE;
        uint8_t byte = state->group_calls->data[(*pos)++];
        gap |= (uint64_t)(byte & 0x7f) << shift;
        if (byte & 0x80)
            continue;
        if (gap == 0 || gap >= state->call_count - *index)
            return FALSE;
        *index += gap;
        return TRUE;
    }
    return FALSE;
}

void sprt_walk_resume(struct sprt_walk *walk, struct trace *trace, const struct sprt_state *state, uint64_t next,
                      uint64_t offset)
{
    walk->trace = trace;
    walk->state = state;
    walk->next = (uint32_t)MIN(next, (uint64_t)state->call_count);
    walk->offset = offset;
    if (offset || walk->next == state->call_count)
        return;
    /* Below call_count: its checkpoint is there (a load checks their count). */
    uint32_t block = walk->next / SPRT_CALLS_PER_CHECKPOINT;
    walk->next = block * SPRT_CALLS_PER_CHECKPOINT;
    walk->offset = g_array_index(state->checkpoints, uint64_t, block);
}

/* The next packet's header at the cursor; FALSE where the packets end. */
static gboolean next_header(const struct sprt_state *state, struct stream_cursor *cursor, uint64_t end,
                            uint32_t *type, uint32_t *size)
{
    uint8_t head[8];
    uint64_t at = cursor->offset;
    if (end - at < 8 || stream_cursor_read(cursor, head, 8) != 0)
        return FALSE;
    return sprt_packet_header(state, head, at, end, type, size) == 0;
}

/* The next CALL packet that the index pass counted, from the cursor on. */
static gboolean find_call(const struct sprt_state *state, struct stream_cursor *cursor, uint64_t end,
                          GByteArray *buffer, struct sprt_call_fields *f, uint64_t *offset, uint32_t *size)
{
    uint32_t type;
    while (next_header(state, cursor, end, &type, size)) {
        *offset = cursor->offset;
        if (type != T_CALL) {
            stream_cursor_seek(cursor, *offset + *size);
            continue;
        }
        g_byte_array_set_size(buffer, *size);
        if (stream_cursor_read(cursor, buffer->data, *size) != 0)
            return FALSE;
        if (sprt_parse_call(state, buffer->data, *size, f))
            return TRUE;
    }
    return FALSE;
}

/* The packets after a CALL that belong to it: ARGS (the last one), and a
 * BTRC whose frames fit, which ends the call; OCFG and FILE pass over it,
 * anything else ends it. */
static void attach_packets(const struct sprt_state *state, struct stream_cursor *cursor, uint64_t end,
                           struct sprt_call *call)
{
    for (;;) {
        uint64_t at = cursor->offset;
        uint32_t type, size;
        if (!next_header(state, cursor, end, &type, &size)) {
            stream_cursor_seek(cursor, at);
            return;
        }
        uint64_t data = cursor->offset;
        if (type == T_ARGS) {
            call->args_offset = data;
            call->args_size = size;
        } else if (type == T_BTRC) {
            uint8_t word[4];
            if (size >= 4 && stream_cursor_read(cursor, word, 4) == 0) {
                uint32_t frames = state->log.big_endian ? load_be32(word) : load_le32(word);
                if ((uint64_t)frames * state->log.pointer_size <= size - 4) {
                    call->bt_offset = data;
                    call->bt_size = size;
                    call->bt_frames = frames;
                }
            }
            stream_cursor_seek(cursor, data + size);
            return;
        } else if (type != T_OCFG && type != T_FILE) {
            stream_cursor_seek(cursor, at);
            return;
        }
        stream_cursor_seek(cursor, data + size);
    }
}

int sprt_walk_next(struct sprt_walk *walk, struct sprt_call *call)
{
    const struct sprt_state *state = walk->state;
    if (walk->next >= state->call_count)
        return 0;
    uint64_t end = stream_size(state->stream);
    struct stream_cursor cursor;
    stream_cursor_init(&cursor, state->stream, walk->offset);
    GByteArray *buffer = g_byte_array_sized_new(256);
    struct sprt_call_fields f;
    uint64_t offset;
    uint32_t size;
    gboolean found = find_call(state, &cursor, end, buffer, &f, &offset, &size);
    g_byte_array_unref(buffer);
    if (!found) {
        stream_cursor_finish(&cursor);
        trace_error(walk->trace, "CALL", walk->offset, "call %u not found again (file changed?)", walk->next + 1);
        return -1;
    }
    *call = (struct sprt_call){
        .index = walk->next, .call_offset = offset, .call_size = size,
        .resource = sprt_resource_at(state, f.res_type, offset), .context = f.context,
        .res_size = f.res_size, .res_id = f.res_id, .type = (uint8_t)(f.type <= 2 ? f.type : 0),
        .leak = sprt_is_leak(state, walk->next), .pair = sprt_pair_code(state, walk->next),
    };
    attach_packets(state, &cursor, end, call);
    walk->offset = cursor.offset;
    walk->next++;
    stream_cursor_finish(&cursor);
    return 1;
}

gboolean sprt_walk_to(struct sprt_walk *walk, uint32_t index, struct sprt_call *call)
{
    if (index >= walk->state->call_count)
        return FALSE;
    if (walk->next > index || index - walk->next >= SPRT_CALLS_PER_CHECKPOINT)
        sprt_walk_resume(walk, walk->trace, walk->state, index, 0);
    for (;;) {
        int step = sprt_walk_next(walk, call);
        if (step == 0)
            trace_error(walk->trace, "CALL", walk->offset, "call %u not found again (file changed?)", index + 1);
        if (step != 1)
            return FALSE;
        if (call->index == index)
            return TRUE;
    }
}
