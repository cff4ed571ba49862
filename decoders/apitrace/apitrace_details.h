/* Call details of one enter or leave event, as the index pass, the walks
 * and the renderers read them (apitrace_call.c). */
#ifndef TRACEFS_APITRACE_DETAILS_H
#define TRACEFS_APITRACE_DETAILS_H

#include "apitrace.h"

struct at_arg_offset {
    uint64_t index;
    uint64_t start, length;    /* its rendering in details->scratch */
};

/* The arguments of a call, enter then leave.  A plain array appended
 * inline: a GArray append was a call per argument. */
struct at_arg_list {
    struct at_arg_offset *items;
    size_t len, capacity;
};

void at_arg_list_grow(struct at_arg_list *list);

static inline void at_arg_list_add(struct at_arg_list *list, const struct at_arg_offset *arg)
{
    if (list->len == list->capacity)
        at_arg_list_grow(list);
    list->items[list->len++] = *arg;
}

struct at_details {
    uint64_t call;
    gboolean define;           /* index pass: define new signatures */
    struct at_arg_list *args;  /* or NULL */
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
/* The flags a return value gives a call besides its function's (glGetError's). */
void at_note_ret(uint32_t *flags, const struct at_function *sig, const struct at_details *details);
/* The call an enter event starts, its details read, as the walks keep it
 * pending (apitrace_index.c). */
struct at_pending at_entered_call(uint64_t offset, uint64_t number, const struct at_function *sig, uint64_t thread,
                                  const struct at_details *details);

/* What a caller rendering many calls keeps between them: allocating it
 * per call was a tenth of rendering `events`. */
struct at_render_scratch {
    struct at_arg_list args;
    GString *values;
    /* One reader for all the calls: successive calls lie in the same
     * pinned chunk, and a reader's start and end cost a cache lookup. */
    struct at_reader reader;
    gboolean reading;
    /* A call a walk rendered while reading it (at_walker.render): its
     * enter event once read (entered), then its leave too (complete).
     * `details` holds both events' details as read_call gathers them, and
     * the call's number (details.call) and value style (details.style). */
    gboolean entered, complete;
    uint64_t enter_offset, leave_offset;
    struct at_function *sig;
    struct at_details details;
    /* The last call number written, as text: a list's next call is
     * usually the next number, and adding one to its text costs less
     * than writing it anew. */
    char number_text[24];
    size_t number_len;         /* 0: none yet */
    uint64_t number_written;
};

/* The walk's side of at_walker.render (apitrace_call.c).
 * at_walk_enter_details: the details to read call `number`'s enter event
 * (at `offset`) into, rendering its values; at_walk_entered tells whether
 * that read went through.  at_walk_leave_details: the details to read that
 * call's leave into, or NULL when its enter is not the one rendered (calls
 * of threads interleaving); at_walk_left tells how it went.  A read that
 * failed leaves nothing rendered: the walk reads the event again without
 * rendering, and the renderer reads the call itself, as without a walk's
 * help (so that damage is reported the same way). */
struct at_details *at_walk_enter_details(struct at_render_scratch *scratch, enum at_call_style style,
                                         uint64_t number, uint64_t offset);
void at_walk_entered(struct at_render_scratch *scratch, struct at_function *sig, gboolean ok);
struct at_details *at_walk_leave_details(struct at_render_scratch *scratch, uint64_t number, uint64_t enter_offset);
void at_walk_left(struct at_render_scratch *scratch, uint64_t leave_offset, gboolean ok);

#endif
