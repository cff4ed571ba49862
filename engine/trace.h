/* A trace being served: its source, its format's state, its tree, its
 * errors.  Everything a decoder needs from the engine goes through here. */
#ifndef TRACEFS_TRACE_H
#define TRACEFS_TRACE_H

#include <glib.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include "text.h"
#include "tree.h"

struct chunk_cache;
struct stream;
struct format;
struct workers;
struct load_ahead;
struct event_files;

struct trace_options {
    const char *format_name;      /* -o format=NAME, NULL to detect */
    uint64_t cache_bytes;         /* -o cache_size= */
    const char *xray_binary;      /* -o xray_binary=PATH */
    const char *index_dir;        /* -o index_dir=DIR */
    gboolean no_index;            /* -o noindex */
    uint64_t index_max;           /* -o index_max=: the index directory's cap, 0 for the default */
    /* Mounts: /events is sized by trace_size_main_view, on the workers,
     * once the mount answers (the first `tail` is then instant, and its
     * checkpoints are saved with the index), and trace_open leaves the
     * saving of the index to it. */
    gboolean size_main_view;
    /* Set for the traces of a folder: they share its cache and are never
     * folders themselves. */
    struct chunk_cache *shared_cache, *shared_text_cache;
    gboolean inside_folder;
    /* -o threads=N: the workers that size views and read ahead; 0 for the
     * online CPUs (at most LIMIT_WORKER_THREADS), 1 for none. */
    unsigned threads;
    struct workers *shared_workers;   /* a folder's, for its traces */
    /* The loaders' fuzz targets: a saved index that is missing or rejected
     * fails the open instead of rescanning the trace (and saving a new one),
     * so that a run costs what the loader costs. */
    gboolean require_saved_index;
};

struct trace {
    char *path;                   /* as given */
    char *real_path;              /* resolved */
    gboolean is_directory;        /* rr traces are directories */
    int fd;                       /* the trace file, or the directory (O_PATH-free O_RDONLY) */
    struct stat st;
    /* The file's size, or a directory trace's files' sizes summed: what
     * the memory rule's 2 % is of. */
    uint64_t source_bytes;
    /* What one view's checkpoints may cost (limit_view_checkpoint_bytes
     * of source_bytes): past it the sizing thins them. */
    uint64_t view_checkpoint_bytes;
    struct trace_options options;

    const struct format *format;
    void *format_state;           /* owned by the format: freed by its close() */

    /* The budget (-o cache_size) is split: three quarters for the trace's
     * decompressed chunks, a quarter for text the sizing of a file rendered
     * and kept for the read that follows (view.c).  Apart, so that sizing
     * every file of a tree (`ls -lR`, `find -size`) cannot evict the chunks
     * the decoders need, nor hold more than the budget. */
    struct chunk_cache *cache;
    struct chunk_cache *text_cache;
    struct workers *workers;      /* owned unless options.shared_workers */
    struct tree *tree;
    GPtrArray *streams;           /* every stream made with trace_add_stream, owned */
    GArray *member_fds;           /* files opened inside a directory trace */
    /* The read-ahead workers' loaders, started by the first of them
     * (trace_loaders), after the daemon's fork. */
    struct load_ahead *loaders;
    gboolean loaders_stopped;     /* by trace_close */
    pthread_mutex_t loaders_lock;
    gboolean index_pass_running;  /* members opened now are read ahead (trace_open_member) */
    GPtrArray *info;              /* info.json members: "\"key\": value" strings */
    GString *readme;              /* format's paragraphs for /README */

    pthread_mutex_t errors_lock;
    GString *errors;              /* /errors text */
    uint64_t error_count;
    double index_seconds;
    gint64 bytes_loaded;          /* file bytes read by all streams (progress) */
    gint64 bytes_sized;           /* text rendered by the sizing of views (progress) */
    gint64 segments_sized;        /* segments the sizing of views rendered (.tracefs/stats) */
    uint64_t index_error_count;   /* errors of the index pass (saved with the index) */
    size_t index_errors_length;
    uint64_t index_saved_views;   /* view indexes built when last saved/loaded */
    const char *index_state;      /* "scanned" (index pass ran) or "loaded" (from the saved index) */
    const char *saved_index_status; /* "used", or why not: "no saved index", "stale (...)" ... */
    char index_save_status[160];  /* "saved", "failed (why)"; "" before any save */
    char *fatal;                  /* why the trace cannot be mounted at all */

    /* The sizing of /events after the mount answers (trace_size_main_view). */
    pthread_mutex_t sizing_lock;
    pthread_cond_t sizing_done;
    int sizing_state;             /* enum trace_sizing */
    double sizing_seconds;        /* rendering /events to size it */
    double index_save_seconds;    /* then saving the index with it */
    struct event_files *event_files; /* the common event files (engine/event_files.c), or NULL */
};

enum trace_sizing { TRACE_SIZING_NONE, TRACE_SIZING_RUNNING, TRACE_SIZING_DONE };

/* Opens and indexes a trace: detects the format (unless forced), runs its
 * index pass, adds the common files.  On failure returns NULL and sets
 * *message to one line such as "x.bin: not a recognised trace (tried ...)". */
struct trace *trace_open(const char *path, const struct trace_options *options, char **message);
void trace_close(struct trace *trace);
/* Starts sizing /events on a worker (on the caller with threads=1) and
 * saves the index when it is done; once per trace. */
void trace_size_main_view(struct trace *trace);
/* Stops the workers (a sizing under way ends early, its result dropped)
 * and waits for the sizing job: the unmount does not wait for the sizing. */
void trace_stop_sizing(struct trace *trace);
/* "none", "running" or "done", and when done how long the sizing took and
 * the save of the index after it. */
const char *trace_sizing_state(struct trace *trace, double *seconds, double *save_seconds);
/* The bytes of the trace's file, or of a directory trace's files. */
uint64_t trace_source_bytes(const struct trace *trace);
/* The format a file or directory would be opened as, by probing only. */
const struct format *trace_probe(const char *path);
/* Saves the persistent index again if views were sized since it was
 * saved or loaded (at unmount, after `tracefs cat`). */
void trace_save_index_if_changed(struct trace *trace);

/* Records a decode problem: shown in /errors as
 * "<where> offset <offset>: <message>".  Thread-safe, bounded. */
/* The /errors lines recorded so far (those past LIMIT_ERRORS_KEPT counted too). */
uint64_t trace_error_count(struct trace *trace);
void trace_error(struct trace *trace, const char *where, uint64_t offset, const char *format, ...)
    G_GNUC_PRINTF(4, 5);
/* Errors held back and added to /errors later, in an order that does not
 * depend on which thread found them first (the segments of a sizing). */
struct trace_error_list {
    GPtrArray *lines;             /* "<where> offset <n>: <message>\n", at most LIMIT_ERRORS_KEPT */
    uint64_t unlisted;            /* further errors, counted only */
};
/* The calling thread's trace_error calls go to `into` until called with NULL. */
void trace_errors_defer(struct trace_error_list *into);
void trace_errors_replay(struct trace *trace, const struct trace_error_list *list);
void trace_error_list_clear(struct trace_error_list *list);
/* Sets the reason the trace cannot be mounted (index pass returns -1). */
void trace_fail(struct trace *trace, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* TRUE when a file of the trace changed since it was opened. */
gboolean trace_changed(struct trace *trace);
/* Why a read of the trace's tree failed with `rc` (g_free it): the trace
 * changed since it was opened (its files' stat differ), a chunk that is
 * damaged (the file unchanged), or the error itself. */
char *trace_read_problem(struct trace *trace, int rc);

/* Streams: the engine owns them and frees them with the trace. */
/* The loaders the read-ahead workers decompress ahead through (NULL with
 * one thread, or in a folder); started at the first call, which must come
 * after the daemon's fork. */
struct load_ahead *trace_loaders(struct trace *trace);
struct stream *trace_add_stream(struct trace *trace, struct stream *stream);
/* The trace file itself as a plain stream (single-file traces). */
struct stream *trace_file_stream(struct trace *trace);
/* Opens a regular file inside a directory trace read-only, never blocking
 * (a FIFO or device there is refused, engine/input_file.h); returns fd or a
 * negative code for trace_member_strerror.  The trace keeps and closes it. */
int trace_open_member(struct trace *trace, const char *name, uint64_t *size);
/* Why trace_open_member failed: "is a FIFO, not a regular file", or strerror's text. */
const char *trace_member_strerror(int rc);

/* A member of /info.json: `json_value` is already valid JSON. */
void trace_info_add(struct trace *trace, const char *key, const char *json_value);
void trace_info_add_number(struct trace *trace, const char *key, uint64_t value);
void trace_info_add_string(struct trace *trace, const char *key, const char *value);

#endif
