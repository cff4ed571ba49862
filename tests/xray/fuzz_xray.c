/* Fuzz target: any bytes opened as an XRay log, every file read. */
#include "fuzz_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace_bytes("xray", NULL, data, size);
}
