/* frames/<n>.mem/<addr>: the hole-filled bytes of each memory write of
 * frame n, read lazily from `data`.  A family nested in the frames family
 * (dir_key = n * 4 + 2): no node per frame or per write.  A write's key is
 * (frame position << 16) | write index. */
#include <errno.h>
#include <string.h>

#include "rr.h"
#include "trace.h"
#include "tree.h"

#define WRITE_BITS 16u

static uint64_t frame_of_dir(uint64_t dir_key)
{
    return dir_key / 4 - 1;
}

/* Writes of one frame: loaded on demand (the listing is small). */
static uint64_t writes_count(const struct family *family, uint64_t dir_key)
{
    struct rr_frame f;
    const char *why;
    uint32_t count = 0;
    if (rr_frame_load(family->context, frame_of_dir(dir_key), &f, &why) == 0)
        count = MIN(f.mem_writes.count, (1u << WRITE_BITS) - 1);
    rr_frame_release(&f);
    return count;
}

static uint64_t writes_key(const struct family *family, uint64_t dir_key, uint64_t n)
{
    (void)family;
    return (frame_of_dir(dir_key) << WRITE_BITS) | n;
}

/* "0x<addr>", or "0x<addr>~<index>" when an earlier write of the frame
 * has the same address; "write-<index>" when f (NULL: unreadable) does
 * not give it. */
static void write_name_from_frame(const struct rr_frame *f, uint32_t index, GString *out)
{
    struct rr_mem_write w;
    if (!f || rr_mem_write_at(f, index, &w) < 0) {
        g_string_append_printf(out, "write-%u", index);
        return;
    }
    g_string_append_printf(out, "0x%" G_GINT64_MODIFIER "x", w.addr);
    for (uint32_t k = 0; k < index; k++) {
        struct rr_mem_write other;
        if (rr_mem_write_at(f, k, &other) == 0 && other.addr == w.addr) {
            g_string_append_printf(out, "~%u", index);
            return;
        }
    }
}

static void writes_name(const struct family *family, uint64_t key, GString *out)
{
    struct rr_frame f;
    const char *why;
    int loaded = rr_frame_load(family->context, key >> WRITE_BITS, &f, &why) == 0;
    write_name_from_frame(loaded ? &f : NULL, (uint32_t)(key & ((1u << WRITE_BITS) - 1)), out);
    rr_frame_release(&f);
}

static gboolean writes_lookup(const struct family *family, uint64_t dir_key, const char *name, uint64_t *key)
{
    struct rr_frame f;
    const char *why;
    gboolean found = FALSE;
    if (rr_frame_load(family->context, frame_of_dir(dir_key), &f, &why) == 0) {
        uint32_t count = MIN(f.mem_writes.count, (1u << WRITE_BITS) - 1);
        GString *candidate = g_string_new(NULL);
        for (uint32_t i = 0; i < count && !found; i++) {
            g_string_truncate(candidate, 0);
            write_name_from_frame(&f, i, candidate);
            if (strcmp(candidate->str, name) == 0) {
                *key = (frame_of_dir(dir_key) << WRITE_BITS) | i;
                found = TRUE;
            }
        }
        g_string_free(candidate, TRUE);
    }
    rr_frame_release(&f);
    return found;
}

/* view arg[0] = frame position, arg[1] = write index. */
static int load_write(const struct view *view, struct rr_frame *f, struct rr_mem_write *w, uint64_t *data_offset)
{
    const char *why;
    if (rr_frame_load(view->context, view->arg[0], f, &why) < 0 ||
        rr_mem_write_at(f, (uint32_t)view->arg[1], w) < 0)
        return -1;
    *data_offset = f->data_offset + rr_frame_stored_bytes(f, (uint32_t)view->arg[1]);
    return 0;
}

static uint64_t write_size(const struct view *view)
{
    struct rr_frame f;
    struct rr_mem_write w;
    uint64_t offset, size = 0;
    if (load_write(view, &f, &w, &offset) == 0)
        size = w.size;
    rr_frame_release(&f);
    return size;
}

static ssize_t write_read_at(const struct view *view, uint64_t offset, void *buf, size_t len)
{
    struct rr_frame f;
    struct rr_mem_write w;
    uint64_t data_offset = 0;
    ssize_t got = -EIO;
    if (load_write(view, &f, &w, &data_offset) == 0)
        got = rr_data_write_read(view->context, data_offset, &w, offset, buf, len);
    rr_frame_release(&f);
    if (got < 0) {
        struct rr_state *state = view->context;
        trace_error(state->trace, "data", data_offset, "frame %" G_GUINT64_FORMAT " write %" G_GUINT64_FORMAT
                    ": recorded bytes unreadable", view->arg[0] + 1, view->arg[1]);
        return -EIO;
    }
    return got;
}

static const struct view_ops write_ops = { .size = write_size, .read_at = write_read_at };

static void writes_view(const struct family *family, uint64_t key, struct view *out)
{
    *out = (struct view){ .ops = &write_ops, .context = family->context,
                          .arg = { key >> WRITE_BITS, key & ((1u << WRITE_BITS) - 1), 0 } };
}

static const struct family_ops writes_ops = {
    .count = writes_count, .entry_key = writes_key, .name = writes_name, .lookup = writes_lookup,
    .view = writes_view,
};

struct family *rr_memory_writes_family(struct rr_state *state)
{
    struct family *writes = g_new0(struct family, 1);
    writes->ops = &writes_ops;
    writes->context = state;
    return writes;
}
