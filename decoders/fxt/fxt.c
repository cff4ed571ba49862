/* Fuchsia trace format (FXT): the format table entry. */
#include "format.h"
#include "fxt.h"
#include "text.h"
#include "trace_event.h"

extern const struct trace_event_iterator fxt_event_iterator;

static int fxt_probe(const struct probe_input *input)
{
    if (input->is_directory || input->head_size < 8)
        return 0;
    if (load_le64(input->head) == FXT_MAGIC_WORD || load_be64(input->head) == FXT_MAGIC_WORD)
        return 100;
    return 0;
}

const struct format format_fxt = {
    .name = "fxt",
    .description = "Fuchsia trace format (FXT)",
    .probe = fxt_probe,
    .index = fxt_index,
    .build_tree = fxt_build_tree,
    .close = fxt_close,
    .save = fxt_save,
    .load = fxt_load,
    .index_version = 6,
    .events = &fxt_event_iterator,
};
