/* apitrace: not implemented yet (placeholder so the format table links). */
#include "format.h"

static int apitrace_probe(const struct probe_input *input)
{
    (void)input;
    return 0;
}

static int apitrace_open(struct trace *trace)
{
    (void)trace;
    return -1;
}

static void apitrace_close(struct trace *trace)
{
    (void)trace;
}

const struct format format_apitrace = {
    .name = "apitrace",
    .description = "apitrace (not yet supported)",
    .probe = apitrace_probe,
    .open = apitrace_open,
    .close = apitrace_close,
};
