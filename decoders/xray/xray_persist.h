/* Saving and loading the XRay side tables (struct format save/load). */
#ifndef TRACEFS_XRAY_PERSIST_H
#define TRACEFS_XRAY_PERSIST_H

#include <glib.h>
#include <stdint.h>

struct trace;
struct saved_writer;
struct xray_state;

int xray_save(struct trace *trace, struct saved_writer *out);
int xray_load(struct trace *trace, const uint8_t *data, size_t size);

/* xray.c: a state with the header read and the symbols loaded (NULL after
 * trace_fail). */
struct xray_state *xray_state_new(struct trace *trace);

#endif
