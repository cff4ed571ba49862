/* View operations of the XRay tree (view->context = struct xray_state). */
#ifndef TRACEFS_XRAY_VIEWS_H
#define TRACEFS_XRAY_VIEWS_H

#include "view.h"

extern const struct view_ops xray_yaml_ops;
extern const struct view_ops xray_all_events_ops;
extern const struct view_ops xray_thread_events_ops;     /* arg0 = thread */
extern const struct view_ops xray_thread_calls_ops;      /* arg0 = thread, arg2 = 1: the stack layout */
extern const struct view_ops xray_function_calls_ops;    /* arg0 = index into state->functions */
extern const struct view_ops xray_trace_event_ops;

/* Where views of every record in time order may be cut: word[0] = shift +
 * a record number at one of the merge's global checkpoints (the events
 * views use them, and the common files through the event iterator). */
struct xray_state;
uint32_t xray_global_cut_points(const struct xray_state *state, uint64_t shift, struct view_cursor *cursors,
                                uint32_t max);

#endif
