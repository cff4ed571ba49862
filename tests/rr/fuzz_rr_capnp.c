/* Fuzz target for the Cap'n Proto reader alone: any bytes as packed
 * messages, each walked generically (every pointer tried as a struct, a
 * list and data, recursively) so every pointer kind and bound is hit. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "capnp/capnp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk_struct(const struct capnp_struct *s, unsigned depth);

static void walk_list(const struct capnp_list *list, unsigned depth)
{
    for (uint32_t i = 0; i < list->count && i < 256; i++) {
        if (list->element_size == 7) {
            struct capnp_struct element;
            if (capnp_list_struct(list, i, &element) == 0)
                walk_struct(&element, depth + 1);
        } else if (list->element_size == 6) {
            const uint8_t *bytes;
            size_t n;
            (void)capnp_list_data(list, i, &bytes, &n);
        } else {
            (void)capnp_list_u32(list, i);
        }
    }
}

static void walk_struct(const struct capnp_struct *s, unsigned depth)
{
    if (depth > 16)
        return;
    for (uint32_t at = 0; at < s->data_bytes && at < 256; at += 8)
        (void)capnp_u64(s, at);
    (void)capnp_bool(s, 33);
    for (uint16_t i = 0; i < s->ptr_count && i < 16; i++) {
        struct capnp_struct child;
        struct capnp_list list;
        const uint8_t *bytes;
        size_t n;
        if (capnp_get_struct(s, i, &child) == 0)
            walk_struct(&child, depth + 1);
        if (capnp_get_list(s, i, &list) == 0)
            walk_list(&list, depth);
        (void)capnp_get_data(s, i, &bytes, &n);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t at = 0;
    for (int n = 0; n < 64 && at < size; n++) {
        struct capnp_message msg;
        struct capnp_struct root;
        size_t end = 0;
        int rc = capnp_read_packed_bytes(data + at, size - at, &msg, &end);
        if (rc == 0 && capnp_root(&msg, &root) == 0)
            walk_struct(&root, 0);
        capnp_message_clear(&msg);
        if (rc != 0 || end == 0)
            break;
        at += end;
    }
    return 0;
}
