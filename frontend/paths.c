/* Paths the user gives are made absolute at startup: the daemon chdir's to
 * "/" before it serves, and a folder's traces are opened when first
 * entered, so a relative path would by then name another file (or none). */
#include <stdlib.h>
#include "paths.h"

char *path_absolute(const char *path)
{
    if (g_path_is_absolute(path))
        return g_strdup(path);
    /* Resolved when it exists, so that ".." after a symlink means what
     * the kernel means by it. */
    char *resolved = realpath(path, NULL);
    if (resolved) {
        char *copy = g_strdup(resolved);
        free(resolved);
        return copy;
    }
    char *cwd = g_get_current_dir();
    char *joined = g_canonicalize_filename(path, cwd);
    g_free(cwd);
    return joined;
}

void path_make_absolute(char **path)
{
    if (!*path)
        return;
    char *absolute = path_absolute(*path);
    g_free(*path);
    *path = absolute;
}
