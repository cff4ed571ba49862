#ifndef TRACEFS_PATHS_H
#define TRACEFS_PATHS_H
#include <glib.h>
/* An absolute form of path (newly allocated): an absolute path as it is,
 * a relative one resolved against the current directory. */
char *path_absolute(const char *path);
/* Replaces a g_malloc'd *path by its absolute form; NULL stays NULL. */
void path_make_absolute(char **path);
#endif
