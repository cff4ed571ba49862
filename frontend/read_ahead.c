/* The kernel's read-ahead for a FUSE mount, through sysfs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "common_files.h"
#include "read_ahead.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape_mountinfo(const char *field)
{
    GString *out = g_string_new(NULL);
    for (const char *c = field; *c; c++) {
        if (c[0] == '\\' && c[1] >= '0' && c[1] <= '3' && c[2] >= '0' && c[2] <= '7' && c[3] >= '0' &&
            c[3] <= '7') {
            g_string_append_c(out, (char)((c[1] - '0') * 64 + (c[2] - '0') * 8 + (c[3] - '0')));
            c += 3;
        } else {
            g_string_append_c(out, *c);
        }
    }
    return g_string_free(out, FALSE);
}

/* A mountinfo line: "id parent major:minor root mountpoint options ... -
 * type source options".  The device when its mount point is `mountpoint`. */
static char *device_of_line(const char *line, const char *mountpoint)
{
    char **fields = g_strsplit(line, " ", 6);
    char *device = NULL;
    if (g_strv_length(fields) >= 6) {
        char *point = unescape_mountinfo(fields[4]);
        if (strcmp(point, mountpoint) == 0)
            device = g_strdup(fields[2]);
        g_free(point);
    }
    g_strfreev(fields);
    return device;
}

/* The mount on `mountpoint` (a resolved path, as /proc/self/mountinfo
 * shows it): its device's "major:minor", or NULL when no mount is there.
 * Reads no file of the mount (its daemon may not be serving yet). */
static char *mount_device(const char *mountpoint)
{
    char *contents = NULL;
    if (!g_file_get_contents("/proc/self/mountinfo", &contents, NULL, NULL))
        return NULL;
    /* The last mount on a path is the one on top: ours, just made. */
    char *device = NULL;
    char **lines = g_strsplit(contents, "\n", -1);
    for (char **line = lines; *line; line++) {
        char *found = device_of_line(*line, mountpoint);
        if (found) {
            g_free(device);
            device = found;
        }
    }
    g_strfreev(lines);
    g_free(contents);
    return device;
}

static char *armed_mountpoint;
static uint64_t armed_bytes;
static gsize applied;

void read_ahead_arm(const char *mountpoint, uint64_t bytes)
{
    g_free(armed_mountpoint);
    armed_mountpoint = g_strdup(mountpoint);
    armed_bytes = bytes & ~(uint64_t)1023;
    if (!armed_bytes)
        common_files_set_read_ahead(0, "-o read_ahead=0");
    else if (!mountpoint)
        common_files_set_read_ahead(0, "the mount point did not resolve");
    else
        common_files_set_read_ahead(0, "not yet: at the first open");
}

void read_ahead_apply(void)
{
    if (!g_once_init_enter(&applied))
        return;
    if (armed_bytes && armed_mountpoint) {
        const char *why_unset = read_ahead_set(armed_mountpoint, armed_bytes);
        common_files_set_read_ahead(why_unset ? 0 : armed_bytes, why_unset);
    }
    g_once_init_leave(&applied, 1);
}

const char *read_ahead_set(const char *mountpoint, uint64_t bytes)
{
    char *device = mount_device(mountpoint);
    if (!device)
        return "the mount is not in /proc/self/mountinfo";
    char *path = g_strdup_printf("/sys/class/bdi/%s/read_ahead_kb", device);
    g_free(device);
    FILE *file = fopen(path, "w");
    g_free(path);
    if (!file)
        return errno == EACCES || errno == EPERM ? "only root may set it" : "no read_ahead_kb in sysfs";
    int written = fprintf(file, "%llu\n", (unsigned long long)(bytes >> 10));
    if (fclose(file) != 0 || written < 0)
        return "sysfs refused the value";
    return NULL;
}
