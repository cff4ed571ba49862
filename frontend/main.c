/* tracefs: mount a trace file read-only as a directory tree. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fuse_lowlevel.h>
#include "fuse_ops.h"
#include "index_command.h"
#include "offline.h"
#include "options.h"
#include "read_ahead.h"
#include "trace.h"
#include "workers.h"

/* A directory that is already the root of a mount (our own earlier mount,
 * typically) is refused rather than stacked on. */
static const char *check_mountpoint(const char *mountpoint)
{
    struct stat st, parent;
    if (stat(mountpoint, &st) < 0)
        return g_strerror(errno);
    if (!S_ISDIR(st.st_mode))
        return "not a directory";
    char *up = g_build_filename(mountpoint, "..", NULL);
    int rc = stat(up, &parent);
    g_free(up);
    if (rc == 0 && (parent.st_dev != st.st_dev || parent.st_ino == st.st_ino))
        return "mount point is busy (already mounted)";
    return NULL;
}

static int serve(struct trace *trace, struct fuse_args *args, const struct command_line *command)
{
    struct fuse_session *session = fuse_session_new(args, &tracefs_operations, sizeof tracefs_operations, trace);
    if (!session)
        return 1;
    int status = 1;
    /* Resolved before the mount: afterwards resolving it would ask this
     * daemon, which does not serve yet. */
    char *resolved = realpath(command->mountpoint, NULL);
    if (fuse_set_signal_handlers(session) != 0)
        goto destroy;
    if (fuse_session_mount(session, command->mountpoint) != 0) {
        fprintf(stderr, "tracefs: %s: cannot mount\n", command->mountpoint);
        goto remove_handlers;
    }
    read_ahead_arm(resolved, command->read_ahead_bytes);
    /* The progress line ended with the scan; a daemon's /events is sized
     * after the fork, where no terminal sees it. */
    if (!command->foreground && isatty(STDERR_FILENO) &&
        strcmp(trace->index_state, "scanned") == 0)
        fprintf(stderr, "tracefs: mounted; /events is being sized in the background (.tracefs/stats: sizing_events)\n");
    fuse_daemonize(command->foreground);
    /* After the fork: the workers run in the process that serves. */
    trace_size_main_view(trace);
    /* -o threads=N bounds the threads that render a request's bytes as
     * well as the workers: with more FUSE threads than that, threads=1
     * rendered a `cat`'s concurrent reads on every core anyway. */
    unsigned request_threads = workers_threads(trace->workers);
    int rc;
    if (command->single_thread || request_threads <= 1) {
        rc = fuse_session_loop(session);
    } else {
        struct fuse_loop_config *config = fuse_loop_cfg_create();
        fuse_loop_cfg_set_max_threads(config, request_threads);
        fuse_loop_cfg_set_idle_threads(config, request_threads);
        rc = fuse_session_loop_mt(session, config);
        fuse_loop_cfg_destroy(config);
    }
    /* The loop returns the signal that ended it: being asked to stop and
     * unmounting is a clean exit. */
    status = rc == 0 || rc == SIGINT || rc == SIGTERM || rc == SIGHUP ? 0 : 1;
    fuse_session_unmount(session);
remove_handlers:
    fuse_remove_signal_handlers(session);
destroy:
    fuse_session_destroy(session);
    free(resolved);
    return status;
}

/* findmnt and /proc/mounts show the trace's path as the source and
 * "fuse.tracefs" as the type (plain "tracefs" is the kernel's ftrace),
 * unless the user named them. */
static void add_mount_options(struct fuse_args *args, const struct command_line *command)
{
    GString *options = g_string_new("ro,default_permissions");
    if (!command->has_subtype)
        g_string_append(options, ",subtype=tracefs");
    if (!command->has_fsname) {
        /* A comma or backslash in the path is escaped for FUSE's option parser. */
        g_string_append(options, ",fsname=");
        for (const char *c = command->trace_path; *c; c++) {
            if (*c == ',' || *c == '\\')
                g_string_append_c(options, '\\');
            g_string_append_c(options, *c);
        }
    }
    fuse_opt_add_arg(args, "-o");
    fuse_opt_add_arg(args, options->str);
    g_string_free(options, TRUE);
}

/* Everything after option parsing; returns the exit status. */
static int run(struct fuse_args *args, struct command_line *command, const char *program)
{
    if (command->show_help) {
        options_print_help(program);
        return 0;
    }
    if (command->show_version) {
        options_print_version();
        return 0;
    }
    if (!command->trace_path || !command->mountpoint)
        return options_usage_error("missing %s\nusage: tracefs [options] TRACE MOUNTPOINT",
                                   command->trace_path ? "MOUNTPOINT" : "TRACE and MOUNTPOINT");
    if (!options_check_fuse(args))
        return EXIT_USAGE;
    options_make_paths_absolute(command);
    const char *problem = check_mountpoint(command->mountpoint);
    if (problem) {
        fprintf(stderr, "tracefs: %s: %s\n", command->mountpoint, problem);
        return 1;
    }
    char *message = NULL;
    command->trace.size_main_view = TRUE;
    struct trace *trace = trace_open(command->trace_path, &command->trace, &message);
    if (!trace) {
        fprintf(stderr, "tracefs: %s\n", message);
        g_free(message);
        return 1;
    }
    add_mount_options(args, command);
    int status = serve(trace, args, command);
    trace_stop_sizing(trace);
    trace_save_index_if_changed(trace);
    trace_close(trace);
    return status;
}

/* Bounded memory under many reader threads: glibc would give each FUSE
 * thread its own arena and raise its mmap threshold after every large free,
 * so large render buffers of concurrent reads would stay in arenas that are
 * never trimmed.  A fixed threshold returns them to the system at once.
 * 64 KiB, the size of a kept text block (view.c): at 256 KiB, blocks the
 * text cache evicted stayed as holes in the arenas (+33 MiB of RSS over
 * the budget when the bench walked rr big-0's tree). */
static void bound_allocator(void)
{
    mallopt(M_ARENA_MAX, 4);
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
}

int main(int argc, char **argv)
{
    bound_allocator();
    int offline = offline_main(argc, argv);
    if (offline < 0)
        offline = index_command_main(argc, argv);
    if (offline >= 0)
        return offline;
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct command_line command;
    int status;
    if (options_parse(&args, &command, FALSE) < 0) {
        status = options_report_parse_error(&command);
    } else {
        status = run(&args, &command, argv[0]);
    }
    command_line_clear(&command);
    fuse_opt_free_args(&args);
    return status;
}
