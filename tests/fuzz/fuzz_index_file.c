/* Fuzzes the persistent index loader: the bytes after a valid header and
 * before a valid checksum (format state, saved errors, view indexes) are
 * the fuzzer's, so its mutations reach the parser instead of failing the
 * checksum.  The trace is an empty folder with a few files in its tree. */
#include <glib.h>
#include <glib/gstdio.h>
#include "fuzz_driver.h"
#include "index_file.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *dir = g_dir_make_tmp("tracefs-fuzz-index-XXXXXX", NULL);
    char *index_dir = g_build_filename(dir, ".index", NULL);
    struct trace_options options = { .index_dir = index_dir, .cache_bytes = 1 << 20 };
    char *message = NULL;
    struct trace *trace = trace_open(dir, &options, &message);   /* saves a valid index */
    g_free(message);
    if (trace) {
        GByteArray *file = g_byte_array_new();
        index_file_encode(trace, data, size, file);
        char *path = index_file_path(trace);
        g_file_set_contents(path, (const char *)file->data, file->len, NULL);
        g_byte_array_free(file, TRUE);
        trace_close(trace);
        options.require_saved_index = TRUE;
        trace = trace_open(dir, &options, &message);              /* loads the fuzzed one */
        options.require_saved_index = FALSE;
        g_free(message);
        if (trace) {
            fuzz_walk_tree(trace);
            trace_close(trace);
        }
        g_unlink(path);
        g_free(path);
    }
    g_rmdir(index_dir);
    g_rmdir(dir);
    g_free(index_dir);
    g_free(dir);
    return 0;
}
