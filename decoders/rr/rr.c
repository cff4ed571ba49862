/* rr: not implemented yet (placeholder so the format table links). */
#include "format.h"

static int rr_probe(const struct probe_input *input)
{
    (void)input;
    return 0;
}

static int rr_open(struct trace *trace)
{
    (void)trace;
    return -1;
}

static void rr_close(struct trace *trace)
{
    (void)trace;
}

const struct format format_rr = {
    .name = "rr",
    .description = "rr (not yet supported)",
    .probe = rr_probe,
    .open = rr_open,
    .close = rr_close,
};
