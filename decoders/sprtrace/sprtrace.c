/* sp-rtrace: not implemented yet (placeholder so the format table links). */
#include "format.h"

static int sprtrace_probe(const struct probe_input *input)
{
    (void)input;
    return 0;
}

static int sprtrace_open(struct trace *trace)
{
    (void)trace;
    return -1;
}

static void sprtrace_close(struct trace *trace)
{
    (void)trace;
}

const struct format format_sprtrace = {
    .name = "sp-rtrace",
    .description = "sp-rtrace (not yet supported)",
    .probe = sprtrace_probe,
    .open = sprtrace_open,
    .close = sprtrace_close,
};
