/* Without libFuzzer (gcc builds, CI): run a fuzz target over files given on
 * the command line, or over every file of the directories given. */
#include <stdio.h>
#include <glib.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void run_file(const char *path)
{
    gchar *data = NULL;
    gsize size = 0;
    if (g_file_get_contents(path, &data, &size, NULL))
        LLVMFuzzerTestOneInput((const unsigned char *)data, size);
    g_free(data);
}

int main(int argc, char **argv)
{
    int runs = 0;
    for (int i = 1; i < argc; i++) {
        if (!g_file_test(argv[i], G_FILE_TEST_IS_DIR)) {
            run_file(argv[i]);
            runs++;
            continue;
        }
        GDir *dir = g_dir_open(argv[i], 0, NULL);
        for (const char *name; dir && (name = g_dir_read_name(dir));) {
            char *path = g_build_filename(argv[i], name, NULL);
            if (g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
                run_file(path);
                runs++;
            }
            g_free(path);
        }
        if (dir)
            g_dir_close(dir);
    }
    printf("replayed %d inputs\n", runs);
    return 0;
}
