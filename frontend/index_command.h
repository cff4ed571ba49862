/* `tracefs index list` and `tracefs index clean [--all]`: the saved
 * indexes of the index directory, seen and removed by hand. */
#ifndef TRACEFS_INDEX_COMMAND_H
#define TRACEFS_INDEX_COMMAND_H

/* The exit status, or -1 when argv is not an `index` command. */
int index_command_main(int argc, char **argv);

#endif
