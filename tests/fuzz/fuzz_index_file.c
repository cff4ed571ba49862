/* Fuzzes the persistent index loader: each input is the body of a saved
 * index (format state, saved errors, view indexes) behind a valid header
 * and before a valid checksum, so that mutations reach the parser instead
 * of failing the checksum.  The trace is a small XRay sample whose whole
 * tree has been read once, so its real saved index has view indexes too.
 *
 * The index directory is a sibling of nothing the key covers: an index
 * directory made inside a traced folder changes the folder's mtime, and
 * every saved index would then be "stale" before the loader read a byte
 * (the target would test nothing else).
 * TRACEFS_FUZZ_WRITE_SEEDS=DIR writes the real body as a seed. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include "format.h"
#include "fuzz_driver.h"
#include "index_file.h"
#include "trace.h"

#define SAMPLE TRACEFS_SOURCE_ROOT "/tests/data/xray/args.fdr-tsc.xray"

static struct trace *sample;
static char *index_dir;

static struct trace_options sample_options(void)
{
    return (struct trace_options){ .format_name = "xray", .index_dir = index_dir, .cache_bytes = 1u << 20 };
}

/* The body of the sample's saved index: the file without its header and
 * checksum (the header is what index_file_encode writes for no body). */
static GBytes *saved_body(void)
{
    char *path = index_file_path(sample), *contents = NULL;
    gsize length = 0;
    GByteArray *header = g_byte_array_new();
    index_file_encode(sample, NULL, 0, header);
    gsize header_size = header->len - 4;
    GBytes *body = NULL;
    if (g_file_get_contents(path, &contents, &length, NULL) && length > header_size + 4)
        body = g_bytes_new(contents + header_size, length - header_size - 4);
    g_free(contents);
    g_free(path);
    g_byte_array_free(header, TRUE);
    return body;
}

/* Saves `data` as the body of the sample's index, opens the sample from it
 * and reads its whole tree.  Returns whether the saved index was used. */
static gboolean open_with_body(const uint8_t *data, size_t size)
{
    GByteArray *file = g_byte_array_new();
    index_file_encode(sample, data, size, file);
    char *path = index_file_path(sample);
    g_file_set_contents(path, (const char *)file->data, file->len, NULL);
    g_chmod(path, 0600);   /* the loader refuses a group-writable index (umask 002) */
    g_byte_array_free(file, TRUE);
    struct trace_options options = sample_options();
    options.require_saved_index = TRUE;
    char *message = NULL;
    struct trace *trace = trace_open(SAMPLE, &options, &message);
    g_free(message);
    if (trace) {
        fuzz_walk_tree(trace);
        trace_close(trace);
    }
    g_unlink(path);
    g_free(path);
    return trace != NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (!format_find("xray"))
        return 0;                               /* not built in (-Dformats=) */
    index_dir = fuzz_temporary_directory("tracefs-fuzz-index-XXXXXX");
    struct trace_options options = sample_options();
    char *message = NULL;
    sample = trace_open(SAMPLE, &options, &message);
    if (!sample) {
        fprintf(stderr, "fuzz_index_file: %s\n", message ? message : SAMPLE);
        abort();
    }
    fuzz_walk_tree(sample);                    /* builds view indexes ... */
    trace_save_index_if_changed(sample);       /* ... and saves them */
    GBytes *body = saved_body();
    gsize size = 0;
    const uint8_t *data = body ? g_bytes_get_data(body, &size) : NULL;
    /* The real body must load, or every run tests the rejection path only. */
    if (!data || !open_with_body(data, size)) {
        fprintf(stderr, "fuzz_index_file: the sample's own saved index does not load\n");
        abort();
    }
    const char *seeds = g_getenv("TRACEFS_FUZZ_WRITE_SEEDS");
    if (seeds) {
        char *seed = g_build_filename(seeds, "xray-args-body", NULL);
        g_file_set_contents(seed, (const char *)data, (gssize)size, NULL);
        g_free(seed);
    }
    g_bytes_unref(body);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!index_dir)
        LLVMFuzzerInitialize(NULL, NULL);      /* the replay runner does not call it */
    if (sample)
        open_with_body(data, size);
    return 0;
}
