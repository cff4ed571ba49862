/* xray: not implemented yet (placeholder so the format table links). */
#include "format.h"

static int xray_probe(const struct probe_input *input)
{
    (void)input;
    return 0;
}

static int xray_open(struct trace *trace)
{
    (void)trace;
    return -1;
}

static void xray_close(struct trace *trace)
{
    (void)trace;
}

const struct format format_xray = {
    .name = "xray",
    .description = "xray (not yet supported)",
    .probe = xray_probe,
    .open = xray_open,
    .close = xray_close,
};
