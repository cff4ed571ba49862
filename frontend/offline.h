#ifndef TRACEFS_OFFLINE_H
#define TRACEFS_OFFLINE_H
/* `tracefs ls|cat|stat TRACE [PATH]`: the tree without a mount.  Returns
 * the exit code, or -1 when argv is not such a command. */
int offline_main(int argc, char **argv);
#endif
