/* A directory of numbered files: "<n><suffix>" for every n of
 * [first, first + count), one file per suffix (calls/<n>.json; frames/<n>
 * beside frames/<n>.json), as a family, so a million calls cost no node
 * each.  The family every format needs for its per-record files, written
 * once here instead of once per decoder. */
#ifndef TRACEFS_NUMBERED_FILES_H
#define TRACEFS_NUMBERED_FILES_H

#include <stdint.h>
#include "tree.h"

struct numbered_files {
    /* One or two suffixes ("" for none); suffix[1] NULL: one file a number. */
    const char *suffix[2];
    uint64_t first;   /* the first number: 0, or 1 for a format counting from 1 */
    /* The content of file `kind` (its suffix's index) of number n. */
    void (*view)(void *context, uint64_t n, unsigned kind, struct view *out);
};

/* Adds the files to `dir`.  An entry's key (its inode's low bits) is
 * n * kinds + kind, so n * 1 for one suffix: the same inodes on every
 * open.  `files` must outlive the tree (a static description). */
void numbered_files_add(struct tree *tree, node_id dir, const struct numbered_files *files, void *context,
                        uint64_t count);

#endif
