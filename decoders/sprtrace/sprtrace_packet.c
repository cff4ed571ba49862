/* Field readers over one packet's bytes and headers, and the probe. */
#include <string.h>
#include "sprtrace.h"
#include "text.h"
#include "tracefs_limits.h"

void sprt_reader_init(struct sprt_reader *r, const struct sprt_state *state, const uint8_t *data, size_t size)
{
    r->data = data;
    r->size = size;
    r->pos = 0;
    r->big_endian = state->log.big_endian;
    r->pointer_size = state->log.pointer_size;
    r->bad = FALSE;
}

static const uint8_t *take(struct sprt_reader *r, size_t n)
{
    if (r->bad || n > r->size - r->pos) {
        r->bad = TRUE;
        return NULL;
    }
    const uint8_t *p = r->data + r->pos;
    r->pos += n;
    return p;
}

uint32_t sprt_u32(struct sprt_reader *r)
{
    const uint8_t *p = take(r, 4);
    if (!p)
        return 0;
    return r->big_endian ? load_be32(p) : load_le32(p);
}

uint64_t sprt_pointer(struct sprt_reader *r)
{
    if (r->pointer_size == 4)
        return sprt_u32(r);
    const uint8_t *p = take(r, 8);
    if (!p)
        return 0;
    return r->big_endian ? load_be64(p) : load_le64(p);
}

/* The whole field, NUL padding included. */
static void string_field(struct sprt_reader *r, const char **text, size_t *len)
{
    *text = "";
    *len = 0;
    const uint8_t *p = take(r, 2);
    if (!p)
        return;
    uint16_t n = r->big_endian ? load_be16(p) : load_le16(p);
    if (n == 0) {
        take(r, 2);
        return;
    }
    const uint8_t *s = take(r, n);
    if (!s)
        return;
    *text = (const char *)s;
    *len = n;
}

/* The length word counts the NUL padding; a zero length still occupies a
 * whole dword (postproc's read_stringa). */
void sprt_string(struct sprt_reader *r, const char **text, size_t *len)
{
    string_field(r, text, len);
    *len = strnlen(*text, *len);
}

char *sprt_name_dup(struct sprt_reader *r, size_t *len)
{
    const char *text;
    string_field(r, &text, len);
    while (*len > 0 && text[*len - 1] == '\0')
        (*len)--;
    char *name = g_malloc(*len + 1);
    memcpy(name, text, *len);
    name[*len] = '\0';
    return name;
}

char *sprt_string_dup(struct sprt_reader *r)
{
    const char *text;
    size_t len;
    sprt_string(r, &text, &len);
    return g_strndup(text, len);
}

int sprt_probe(const struct probe_input *input)
{
    const uint8_t *h = input->head;
    if (input->is_directory || input->head_size < 8 || h[0] != 0xF0)
        return 0;
    unsigned size = h[1], arch_len = h[4];
    if (h[2] < 1 || h[2] > 2 || arch_len == 0 || 5u + arch_len + 2 > 2u + size)
        return 0;
    if (2u + size > input->head_size)
        return 0;
    uint8_t endian = h[5 + arch_len], ptr = h[6 + arch_len];
    if (endian > 1 || (ptr != 4 && ptr != 8))
        return 0;
    return 90;
}

gboolean sprt_parse_call(const struct sprt_state *state, const uint8_t *data, size_t size,
                         struct sprt_call_fields *f)
{
    struct sprt_reader r;
    sprt_reader_init(&r, state, data, size);
    f->res_type = sprt_u32(&r);
    f->context = sprt_u32(&r);
    f->timestamp = sprt_u32(&r);
    f->type = sprt_u32(&r);
    sprt_string(&r, &f->name, &f->name_len);
    f->res_size = (int32_t)sprt_u32(&r);
    f->res_id = sprt_pointer(&r);
    return !r.bad;
}

int sprt_packet_header(const struct sprt_state *state, const uint8_t head[8], uint64_t offset, uint64_t end,
                       uint32_t *type, uint32_t *size)
{
    uint32_t a = state->log.big_endian ? load_be32(head) : load_le32(head);
    uint32_t b = state->log.big_endian ? load_be32(head + 4) : load_le32(head + 4);
    /* The type is a native dword built as 'M' | 'I' << 8 ...: ASCII in
     * file order on little-endian systems, reversed on big-endian ones. */
    *type = state->log.vmajor < 2 ? b : a;
    *size = state->log.vmajor < 2 ? a : b;
    if (state->log.vmajor < 2) {
        if (*size < 4)
            return SPRT_HEAD_SHORT;
        *size -= 4;                        /* 1.x counts the type field */
    }
    uint64_t data = offset + 8;
    if (*size > LIMIT_SPRT_PACKET_BYTES || data > end || *size > end - data)
        return SPRT_HEAD_PAST_END;
    return 0;
}
