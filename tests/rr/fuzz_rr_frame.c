/* Fuzz target: any bytes as a sequence of packed Cap'n Proto messages,
 * each decoded as an rr Frame and rendered as every dump variant: covers
 * the capnp reader (packing, segment tables, far pointers, limits), the
 * frame decoder and the text renderer.  No data stream: memory reads
 * fail cleanly. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rr/rr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void render_messages(struct rr_state *state, const uint8_t *data, size_t size)
{
    size_t at = 0;
    for (int n = 0; n < 64 && at < size; n++) {
        struct rr_frame f;
        size_t end = 0;
        const char *why = NULL;
        memset(&f, 0, sizeof f);
        f.time = 1;
        int rc = capnp_read_packed_bytes(data + at, size - at, &f.msg, &end);
        if (rc == 0 && rr_frame_decode(&f, &why) == 0) {
            GString *out = g_string_new(NULL);
            rr_dump_frame(state, &f, 0, out);
            rr_dump_frame(state, &f, RR_DUMP_SYSCALLBUF | RR_DUMP_MEMORY | RR_DUMP_MMAPS | RR_DUMP_TASKS |
                                     RR_DUMP_SOCKETS, out);
            g_string_free(out, TRUE);
        }
        rr_frame_release(&f);
        if (rc != 0 || end == 0)
            break;
        at += end;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rr_state state;
    memset(&state, 0, sizeof state);
    state.header.rrcall_base = 1000;
    state.header.syscallbuf_hdr_size = 30;
    state.dir_real_path = (char *)"/fuzz";
    state.checkpoints = g_array_new(FALSE, TRUE, sizeof(struct rr_checkpoint));
    state.mmaps = g_array_new(FALSE, TRUE, sizeof(struct rr_mmap));
    state.tasks = g_array_new(FALSE, TRUE, sizeof(struct rr_task));
    struct rr_checkpoint checkpoint = { 0 };
    g_array_append_val(state.checkpoints, checkpoint);
    state.frame_count = 1;
    render_messages(&state, data, size);
    g_array_unref(state.checkpoints);
    g_array_unref(state.mmaps);
    g_array_unref(state.tasks);
    return 0;
}
