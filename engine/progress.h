/* The progress line of a mount: on a terminal only, about twice a second,
 * erased when done.  It follows the phases of opening a trace: the index
 * pass (bytes of the trace read, of its size) and the sizing of /events
 * (bytes of text rendered; its size is what is being found out). */
#ifndef TRACEFS_PROGRESS_H
#define TRACEFS_PROGRESS_H
#include "trace.h"

enum progress_phase { PROGRESS_INDEXING, PROGRESS_SIZING };

struct progress;
/* NULL (and every call below a no-op) when stderr is not a terminal. */
struct progress *progress_start(struct trace *trace, enum progress_phase phase);
/* Erases the line and frees the progress. */
void progress_stop(struct progress *progress);
#endif
