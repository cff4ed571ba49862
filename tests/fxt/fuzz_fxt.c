/* libFuzzer target for the FXT decoder: opens the bytes as an FXT trace
 * (format forced, so inputs without the magic reach the record decoder)
 * and reads every file of the tree. */
#include <stddef.h>
#include <stdint.h>
#include "fuzz_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace_bytes("fxt", NULL, data, size);
}
