#ifndef TRACEFS_FUSE_OPS_H
#define TRACEFS_FUSE_OPS_H
#include <fuse_lowlevel.h>
/* The one fuse_lowlevel_ops table; userdata is the struct trace. */
extern const struct fuse_lowlevel_ops tracefs_operations;
#endif
