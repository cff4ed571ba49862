/* Fuzz target: any bytes as an apitrace trace (container and stream). */
#include <stddef.h>
#include <stdint.h>
#include "fuzz_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace_bytes("apitrace", NULL, data, size);
}
