/* Decodes one record again from its reference (views call this from many
 * threads: only locals and stream reads). */
#include "xray_format.h"

static gboolean decode_basic(const struct xray_state *state, const struct xray_ref *ref, struct xray_record *out)
{
    uint8_t r[32];
    if (stream_read_exact(state->stream, ref->offset, r, 32) != 0)
        return FALSE;
    if (ref->kind != XRAY_ENTER_ARG)
        return TRUE;
    uint8_t a[32];
    if (stream_read_exact(state->stream, ref->offset + 32, a, 32) != 0)
        return TRUE;
    /* An argument payload belongs to the record just before it (llvm checks
     * the function and thread, and the process from version 3 on). */
    if (load_le16(a) != 1 || load_le32(a + 4) != load_le32(r + 4) || load_le32(a + 8) != load_le32(r + 16))
        return TRUE;
    if (state->header.version >= 3 && load_le32(a + 12) != load_le32(r + 20))
        return TRUE;
    out->has_arg = TRUE;
    out->arg = load_le64(a + 16);
    return TRUE;
}

static gboolean decode_fdr(const struct xray_state *state, const struct xray_ref *ref, struct xray_record *out)
{
    uint8_t r[16];
    if (ref->kind == XRAY_CUSTOM || ref->kind == XRAY_TYPED) {
        if (stream_read_exact(state->stream, ref->offset, r, 16) != 0)
            return FALSE;
        out->payload_offset = ref->offset + 16;
        out->payload_size = load_le32(r + 1);   /* checked by the index pass */
        if (ref->kind == XRAY_TYPED)
            out->event_type = load_le16(r + 9);
        return TRUE;
    }
    if (ref->kind != XRAY_ENTER_ARG)
        return TRUE;
    if (stream_read_exact(state->stream, ref->offset + 8, r, 16) == 0 && r[0] == 0x0d) {
        out->has_arg = TRUE;
        out->arg = load_le64(r + 1);
    }
    return TRUE;
}

gboolean xray_decode_ref(const struct xray_state *state, const struct xray_ref *ref, struct xray_record *out)
{
    *out = (struct xray_record){
        .kind = ref->kind, .func_id = ref->func_id, .cpu = ref->cpu, .thread = ref->thread,
        .tsc = ref->tsc, .offset = ref->offset,
    };
    if (state->header.type == 0)
        return decode_basic(state, ref, out);
    return decode_fdr(state, ref, out);
}
