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

#endif
