/* Call details of one enter or leave event, as the index pass and the
 * renderers read them (apitrace_call.c). */
#ifndef TRACEFS_APITRACE_DETAILS_H
#define TRACEFS_APITRACE_DETAILS_H

#include "apitrace.h"

struct at_arg_offset {
    uint64_t index;
    uint64_t offset;           /* the value's first byte */
    uint64_t start, length;    /* its rendering in details->scratch */
};

struct at_details {
    uint64_t call;
    gboolean define;           /* index pass: define new signatures */
    GArray *args;              /* struct at_arg_offset, or NULL */
    GArray *blobs;             /* struct at_blob, or NULL: note top-level blobs */
    uint64_t ret_offset, backtrace_offset;
    /* Rendering while reading (one parse per value): values go to scratch
     * in this style; NULL scratch = only skip them. */
    GString *scratch;
    enum at_value_style style;
    uint64_t ret_start, ret_length;
    gboolean fake;
    uint64_t thread;           /* detail 0x03 (version < 4) */
    gboolean has_thread;
    int64_t ret_int;           /* the return value as an integer, when it is one */
    gboolean ret_has_int;
    const char *why;           /* set on failure */
};

void at_details_init(struct at_details *details, uint64_t call, gboolean define);
/* Reads details up to the terminator; FALSE (details->why) on damage. */
gboolean at_call_details(struct at_state *state, struct at_reader *reader, struct at_details *details);

#endif
