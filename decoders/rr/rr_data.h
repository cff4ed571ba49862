/* Recorded memory (the `data` stream) and the per-frame side records. */
#ifndef TRACEFS_RR_DATA_H
#define TRACEFS_RR_DATA_H

#include "rr.h"

/* Offset in `data` of write i of a frame. */
uint64_t rr_data_write_offset(const struct rr_state *state, const struct rr_frame *frame, uint32_t i);
/* The hole-filled bytes of write i (NULL when larger than max_bytes or
 * unreadable). */
GByteArray *rr_data_write_bytes(const struct rr_state *state, const struct rr_frame *frame, uint32_t i,
                                uint64_t max_bytes);
/* Copies bytes [offset, offset+len) of the hole-filled write; returns the
 * count copied or -1. */
ssize_t rr_data_write_read(const struct rr_state *state, uint64_t data_offset, const struct rr_mem_write *w,
                           uint64_t offset, uint8_t *buf, size_t len);
/* The first task event at this global time (what rr dump -e shows). */
const struct rr_task *rr_data_task_at(const struct rr_state *state, int64_t time);
/* The mmaps rr dump -p shows at this global time. */
void rr_data_mmaps_at(const struct rr_state *state, int64_t time, guint *first, guint *count);

#endif
