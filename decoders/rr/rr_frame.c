/* Decoding one Frame message (v85 layout, see rr-layout.txt). */
#include <string.h>

#include "rr.h"
#include "trace.h"
#include "tracefs_limits.h"

int rr_event_has_registers(uint16_t event)
{
    switch (event) {
    case RR_EV_INSTRUCTION_TRAP: case RR_EV_PATCH_SYSCALL: case RR_EV_SCHED:
    case RR_EV_SYSCALL: case RR_EV_SIGNAL: case RR_EV_SIGNAL_DELIVERY: case RR_EV_SIGNAL_HANDLER:
    case RR_EV_PATCH_AFTER_SYSCALL: case RR_EV_PATCH_VSYSCALL: case RR_EV_PATCH_TRAPPING_INSTRUCTION:
        return 1;
    default:
        return 0;
    }
}

static int get_raw(const struct capnp_struct *s, uint16_t index, const uint8_t **data, size_t *size)
{
    struct capnp_struct holder;
    *data = NULL;
    *size = 0;
    if (capnp_get_struct(s, index, &holder) < 0)
        return -1;
    return capnp_get_data(&holder, 0, data, size);
}

static int decode_signal(struct rr_frame *f)
{
    struct capnp_struct sig;
    if (capnp_get_struct(&f->root, 3, &sig) < 0)
        return -1;
    f->siginfo_arch = capnp_u16(&sig, 0);
    f->deterministic = capnp_bool(&sig, 16);
    f->disposition = capnp_u16(&sig, 4);
    return capnp_get_data(&sig, 0, &f->siginfo, &f->siginfo_size);
}

static int decode_syscall(struct rr_frame *f)
{
    const struct capnp_struct *r = &f->root;
    f->sys_arch = capnp_u16(r, 24);
    f->sys_state = capnp_u16(r, 26);
    f->sys_number = (int32_t)capnp_u32(r, 28);
    f->sys_failed = capnp_bool(r, 256);
    f->sys_extra = capnp_u16(r, 34);
    switch (f->sys_extra) {
    case 1:
        f->write_offset = (int64_t)capnp_u64(r, 40);
        return 0;
    case 2: case 3: case 5:
        return capnp_get_list(r, 3, &f->extra_list);
    case 4:
        if (capnp_get_data(r, 3, &f->local_addr, &f->local_addr_size) < 0)
            return -1;
        return capnp_get_data(r, 4, &f->remote_addr, &f->remote_addr_size);
    default:
        return 0;
    }
}

int rr_frame_decode(struct rr_frame *f, const char **why)
{
    struct capnp_struct *r = &f->root;
    if (capnp_root(&f->msg, r) < 0)
        goto bad;
    f->tid = (int32_t)capnp_u32(r, 0);
    f->arch = capnp_u16(r, 4);
    f->event = capnp_u16(r, 6);
    f->ticks = (int64_t)capnp_u64(r, 8);
    uint64_t bits = capnp_u64(r, 16);
    memcpy(&f->monotonic_sec, &bits, sizeof bits);
    f->in_syscallbuf_hook = capnp_u64(r, 48);
    if (capnp_get_list(r, 0, &f->mem_writes) < 0)
        goto bad;
    if (f->mem_writes.count && f->mem_writes.element_size != 7) {
        *why = "memWrites is not a struct list";
        return -1;
    }
    if (get_raw(r, 1, &f->regs, &f->regs_size) < 0 || get_raw(r, 2, &f->extra, &f->extra_size) < 0)
        goto bad;
    if (f->event >= RR_EV_COUNT) {
        *why = "unknown event kind";
        return -1;
    }
    int rc = 0;
    if (f->event == RR_EV_SIGNAL || f->event == RR_EV_SIGNAL_DELIVERY || f->event == RR_EV_SIGNAL_HANDLER)
        rc = decode_signal(f);
    else if (f->event == RR_EV_SYSCALL)
        rc = decode_syscall(f);
    else if (f->event == RR_EV_SYSCALLBUF_FLUSH)
        rc = capnp_get_data(r, 3, &f->mprotect, &f->mprotect_size);
    if (rc < 0)
        goto bad;
    return 0;
bad:
    *why = f->msg.error ? f->msg.error : "bad frame";
    return -1;
}

void rr_frame_checkpoint(const struct rr_state *state, uint64_t index, struct rr_frame_pos *pos)
{
    uint64_t block = index / LIMIT_RR_FRAME_CHECKPOINT;
    memset(pos, 0, sizeof *pos);
    if (block < state->checkpoints->len) {
        const struct rr_checkpoint *c = &g_array_index(state->checkpoints, struct rr_checkpoint, block);
        pos->index = block * LIMIT_RR_FRAME_CHECKPOINT;
        pos->offset = c->offset;
        pos->data_offset = c->data_offset;
    }
}

uint32_t rr_frame_cuts(const struct rr_state *state, view_cut_fn cut, struct view_cursor *cursors, uint32_t max)
{
    uint64_t blocks = MIN((uint64_t)state->checkpoints->len,
                          (state->frame_count + LIMIT_RR_FRAME_CHECKPOINT - 1) / LIMIT_RR_FRAME_CHECKPOINT);
    return view_segment_cuts(state->frame_count, blocks, max, cut, state, cursors);
}

int rr_frame_read(struct rr_state *state, struct rr_frame_pos *pos, struct rr_frame *f, const char **why)
{
    memset(f, 0, sizeof *f);
    f->time = pos->index + 1;
    f->data_offset = pos->data_offset;
    if (pos->index >= state->frame_count || !state->events) {
        *why = "no such frame";
        return -1;
    }
    uint64_t end;
    if (capnp_read_packed(state->events, pos->offset, &f->msg, &end) != 0) {
        *why = f->msg.error ? f->msg.error : "frame missing";
        return -1;
    }
    if (rr_frame_decode(f, why) < 0)
        return -1;
    pos->index++;
    pos->offset = end;
    pos->data_offset += rr_frame_stored_bytes(f, f->mem_writes.count);
    return 0;
}

int rr_frame_load(struct rr_state *state, uint64_t index, struct rr_frame *f, const char **why)
{
    struct rr_frame_pos pos;
    memset(f, 0, sizeof *f);
    f->time = index + 1;
    if (index >= state->frame_count) {
        *why = "no such frame";
        return -1;
    }
    rr_frame_checkpoint(state, index, &pos);
    while (pos.index < index) {
        if (rr_frame_read(state, &pos, f, why) < 0) {
            f->time = index + 1;
            return -1;
        }
        rr_frame_release(f);
    }
    return rr_frame_read(state, &pos, f, why);
}

uint64_t rr_frame_stored_bytes(const struct rr_frame *f, uint32_t writes)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < writes && i < f->mem_writes.count; i++) {
        struct rr_mem_write w;
        if (rr_mem_write_at(f, i, &w) < 0)
            break;
        total += rr_mem_write_stored(&w);
    }
    return total;
}

int rr_frame_has_writes(const struct rr_state *state, uint64_t index)
{
    uint64_t block = index / LIMIT_RR_FRAME_CHECKPOINT;
    if (index >= state->frame_count || block >= state->checkpoints->len)
        return 0;
    const struct rr_checkpoint *c = &g_array_index(state->checkpoints, struct rr_checkpoint, block);
    return (int)((c->writes_mask >> (index % LIMIT_RR_FRAME_CHECKPOINT)) & 1);
}

void rr_frame_release(struct rr_frame *f)
{
    capnp_message_clear(&f->msg);
}

int rr_mem_write_at(const struct rr_frame *f, uint32_t i, struct rr_mem_write *out)
{
    struct capnp_struct w;
    memset(out, 0, sizeof *out);
    if (capnp_list_struct(&f->mem_writes, i, &w) < 0)
        return -1;
    out->tid = (int32_t)capnp_u32(&w, 0);
    out->addr = capnp_u64(&w, 8);
    out->size = capnp_u64(&w, 16);
    if (capnp_get_list(&w, 0, &out->holes) < 0)
        return -1;
    if (out->holes.count && out->holes.element_size != 7) {
        f->mem_writes.msg->error = "holes is not a struct list";
        return -1;
    }
    return 0;
}

uint64_t rr_mem_write_stored(const struct rr_mem_write *w)
{
    uint64_t holes = 0;
    for (uint32_t i = 0; i < w->holes.count; i++) {
        struct capnp_struct h;
        if (capnp_list_struct(&w->holes, i, &h) < 0)
            break;
        uint64_t size = capnp_u64(&h, 8);
        holes = size > w->size - holes ? w->size : holes + size;
    }
    return w->size - holes;
}

enum view_step rr_frame_error(struct rr_state *state, const char *where, uint64_t offset, uint64_t index,
                              const char *why)
{
    trace_error(state->trace, where, offset, "frame %" G_GUINT64_FORMAT ": %s", index + 1,
                why ? why : "unreadable");
    return VIEW_ERROR;
}
