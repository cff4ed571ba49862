/* The decoder's view constructors (apitrace_views.c). */
#ifndef TRACEFS_APITRACE_VIEWS_H
#define TRACEFS_APITRACE_VIEWS_H

#include "apitrace.h"
#include "view.h"

/* Flags of a call-list view, above the enum at_call_style byte. */
#define AT_LIST_HEADER  (1u << 8)     /* starts with the "// property" lines */
#define AT_LIST_THREAD  (1u << 9)     /* only calls of thread (flags >> 32) */
#define AT_LIST_FRAME   (1u << 10)    /* only frame `frame` */

/* The views over an at_state (view.context), their view.arg as
 * apitrace_views.c says: call lists (arg[0] style | AT_LIST_* bits,
 * arg[1] the frame), calls/<n>.json, functions/<name>/calls and
 * frames/<n>.json. */
extern const struct view_ops at_list_ops, at_call_json_ops, at_function_calls_ops, at_frame_json_ops;

#endif
