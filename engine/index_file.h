/* The persistent index: what one indexing of a trace learned, saved under
 * $XDG_CACHE_HOME/tracefs/ so the next mount of the same trace skips it.
 * Keyed by the trace's real path, size, mtime, ctime, inode, device and a
 * content fingerprint; only this user's files are read (index_cache.h); versioned
 * and checksummed; written to a temporary name and renamed, so concurrent
 * mounts never see a half-written file.  A stale, foreign or damaged index
 * is ignored (and replaced), never trusted. */
#ifndef TRACEFS_INDEX_FILE_H
#define TRACEFS_INDEX_FILE_H

#include <glib.h>
#include <stdint.h>

struct trace;

/* A loaded, verified index.  NULL fields when absent. */
struct saved_index {
    GBytes *file;                 /* the whole file */
    const uint8_t *format_state;  /* the format's save() bytes */
    size_t format_state_size;
    gboolean has_format_state;
    uint64_t error_count;         /* what the index pass put in /errors */
    const char *errors;
    size_t errors_size;
    const uint8_t *views;         /* the saved view indexes section */
    size_t views_size;
    const uint8_t *walk;          /* the walk of the events (event_files_save_walk) */
    size_t walk_size;
};

/* Where the index of this trace lives (g_free). */
char *index_file_path(struct trace *trace);
/* Reads and verifies; FALSE (and *why set, static) when absent or unusable. */
gboolean index_file_load(struct trace *trace, struct saved_index *out, const char **why);
void saved_index_clear(struct saved_index *index);
/* Gives the tree the view sizes and checkpoints saved for it, if the tree
 * is the one they were saved for. */
void index_file_apply_views(struct trace *trace, const struct saved_index *index);
/* Gives the trace's common files the saved walk of the events, if it checks. */
void index_file_apply_walk(struct trace *trace, const struct saved_index *index);
/* Wraps `body` (everything after the key) in this trace's header and a
 * checksum, as a saved index file would hold it: for fuzzing the loader. */
void index_file_encode(struct trace *trace, const uint8_t *body, size_t size, GByteArray *out);
/* The same for a file holding only a format's saved state (no errors, no
 * view indexes): for testing and fuzzing the formats' loaders. */
void index_file_encode_state(struct trace *trace, const uint8_t *state, size_t size, GByteArray *out);
/* Saves the format state (if the format can) and every sized view, in the
 * index directory under its cap (index_cache.h); a failure is said once per
 * process on stderr and kept for index_file_save_status. */
int index_file_save(struct trace *trace);
/* For .tracefs/stats: "saved", "none" (nothing written yet), "off"
 * (-o noindex) or "failed (why)". */
const char *index_file_save_status(struct trace *trace);

/* What a saved index's header says about its trace (for `tracefs index`). */
struct index_file_key {
    char *format, *trace_path;
    gboolean this_build;          /* written by this tracefs executable */
    uint64_t size, ino, dev, ctime_ns;
    int64_t mtime_s, mtime_ns;
};
/* FALSE when the file is not a saved index of this layout. */
gboolean index_file_read_key(int fd, struct index_file_key *key);
void index_file_key_clear(struct index_file_key *key);
/* "current", "changed" or "gone": the trace now against the key. */
const char *index_file_key_state(const struct index_file_key *key);

#endif
