/* The decoder's view constructors (apitrace_views.c). */
#ifndef TRACEFS_APITRACE_VIEWS_H
#define TRACEFS_APITRACE_VIEWS_H

#include "apitrace.h"
#include "view.h"

/* Flags of a call-list view, above the enum at_call_style byte. */
#define AT_LIST_HEADER  (1u << 8)     /* starts with the "// property" lines */
#define AT_LIST_THREAD  (1u << 9)     /* only calls of thread (flags >> 32) */
#define AT_LIST_FRAME   (1u << 10)    /* only frame `frame` */

void at_list_view(struct at_state *state, struct view *view, uint64_t flags, uint64_t frame);
void at_call_json_view(struct at_state *state, struct view *view, uint64_t number);
void at_function_calls_view(struct at_state *state, struct view *view, uint32_t function);
void at_frame_json_view(struct at_state *state, struct view *view, uint64_t frame);

#endif
