/* Fuzzes every format's saved-index loader (struct format's `load` hook):
 * a sample trace of each format is opened once, and each input becomes the
 * format-state part of a saved index for it (first byte: which format), with
 * a valid header, key and checksum, so that mutations reach the loader
 * rather than failing the checksum.  Whatever loads is then read in full.
 * TRACEFS_FUZZ_WRITE_SEEDS=DIR writes the real saved states as seeds. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include "format.h"
#include "fuzz_driver.h"
#include "index_file.h"
#include "saved_bytes.h"
#include "trace.h"

#define SAMPLE(path) TRACEFS_SOURCE_ROOT "/tests/data/" path

static const struct {
    const char *format, *path;
} samples[] = {
    { "fxt", SAMPLE("fxt/synthetic-le.fxt") },
    { "sp-rtrace", SAMPLE("sprtrace/v2.0_memtransfer.rtrace") },
    { "xray", SAMPLE("xray/args.fdr-tsc.xray") },
    { "apitrace", SAMPLE("apitrace/es2_info-egl.trace") },
    { "rr", SAMPLE("rr/edge-0") },
    /* several threads, 1 KiB buffers: many segments, checkpoints, open calls */
    { "xray", SAMPLE("xray/threads.fdr-tsc-buf1k.xray") },
};
#define SAMPLE_COUNT G_N_ELEMENTS(samples)

static struct trace *opened[SAMPLE_COUNT];
static char *index_dir;

static struct trace_options sample_options(const char *format)
{
    return (struct trace_options){ .format_name = format, .index_dir = index_dir, .cache_bytes = 4u << 20 };
}

static void write_seed(const char *dir, unsigned which, struct trace *trace)
{
    struct saved_writer *state = saved_writer_new();
    guint8 selector = (guint8)which;
    saved_put(state, &selector, 1);
    if (trace->format->save(trace, state) == 0) {
        GByteArray *seed = saved_writer_join(state);
        char *path = g_strdup_printf("%s/%s-%u", dir, samples[which].format, which);
        g_file_set_contents(path, (const char *)seed->data, seed->len, NULL);
        g_free(path);
        g_byte_array_free(seed, TRUE);
    }
    saved_writer_free(state);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    index_dir = fuzz_temporary_directory("tracefs-fuzz-state-XXXXXX");
    const char *seeds = g_getenv("TRACEFS_FUZZ_WRITE_SEEDS");
    for (unsigned i = 0; i < SAMPLE_COUNT; i++) {
        const struct format *format = format_find(samples[i].format);
        if (!format || !format->load)
            continue;                           /* not built in (-Dformats=) */
        struct trace_options options = sample_options(samples[i].format);
        options.no_index = TRUE;
        char *message = NULL;
        opened[i] = trace_open(samples[i].path, &options, &message);
        g_free(message);
        if (opened[i] && seeds)
            write_seed(seeds, i, opened[i]);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!index_dir)
        LLVMFuzzerInitialize(NULL, NULL);      /* the replay runner does not call it */
    if (size == 0 || data[0] >= SAMPLE_COUNT || !opened[data[0]])
        return 0;
    struct trace *sample = opened[data[0]];
    GByteArray *file = g_byte_array_new();
    index_file_encode_state(sample, data + 1, size - 1, file);
    char *path = index_file_path(sample);
    g_file_set_contents(path, (const char *)file->data, file->len, NULL);
    g_chmod(path, 0600);   /* the loader refuses a group-writable index (umask 002) */
    struct trace_options options = sample_options(samples[data[0]].format);
    options.no_index = FALSE;
    options.require_saved_index = TRUE;
    char *message = NULL;
    struct trace *trace = trace_open(samples[data[0]].path, &options, &message);
    g_free(message);
    if (trace) {
        fuzz_walk_tree(trace);
        trace_close(trace);
    }
    g_unlink(path);
    g_free(path);
    g_byte_array_free(file, TRUE);
    return 0;
}
