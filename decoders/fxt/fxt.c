/* fxt: not implemented yet (placeholder so the format table links). */
#include "format.h"

static int fxt_probe(const struct probe_input *input)
{
    (void)input;
    return 0;
}

static int fxt_open(struct trace *trace)
{
    (void)trace;
    return -1;
}

static void fxt_close(struct trace *trace)
{
    (void)trace;
}

const struct format format_fxt = {
    .name = "fxt",
    .description = "fxt (not yet supported)",
    .probe = fxt_probe,
    .open = fxt_open,
    .close = fxt_close,
};
