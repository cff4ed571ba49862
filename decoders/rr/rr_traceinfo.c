/* /rr-traceinfo.json: what `rr traceinfo TRACE` (rr 5.6.0,
 * src/TraceInfoCommand.cc) prints, byte for byte: the trace's Header, then
 * the environment rr reads after replaying to the initial exec, here read
 * from the memory recorded with that exec (rr_environ.c), or
 * `"environ":null` where the recording does not give rr's answer.  (Where
 * rr cannot replay, as on machines without usable performance counters,
 * rr's stdout stops after the header fields with a fatal error: that
 * output is a prefix of this file.)
 *
 * The file exists only where rr's TraceReader takes the header: a `version`
 * file (not `incomplete`) saying 85, syscallbuf protocol 0, known ticks
 * semantics and architecture, a 16-byte uuid, and for x86 traces CPUID
 * records in whole 24-byte records.  For a non-x86 trace rr leaves xcr0 and
 * cpuidFaulting unset (they print whatever memory held): here they are what
 * rr computes from zero, 3 and false, and cpuidRecords is empty. */
#include <inttypes.h>
#include "rr.h"
#include "text.h"
#include "trace.h"
#include "tree.h"

#define CPUID_RECORD_BYTES 24
#define CPUID_GETXSAVE 0x0du
#define CPUID_ANY_SUBLEAF 0xffffffffu

static int is_x86(const struct rr_header *h)
{
    return h->native_arch == RR_ARCH_X86 || h->native_arch == RR_ARCH_X8664;
}

static int rr_accepts(const struct rr_header *h)
{
    gsize uuid_size = h->uuid ? g_bytes_get_size(h->uuid) : 0;
    gsize records_size = h->cpuid_records ? g_bytes_get_size(h->cpuid_records) : 0;
    return h->rr_reads_it && h->syscallbuf_protocol == 0 && h->ticks_semantics < 2 &&
           h->native_arch <= RR_ARCH_AARCH64 && uuid_size == 16 &&
           (!is_x86(h) || records_size % CPUID_RECORD_BYTES == 0);
}

/* rr's TraceReader::xcr0(): the recorded value, else what CPUID leaf 0xD
 * (subleaf 0) says the CPU supports, else x87+SSE. */
static uint64_t xcr0_of(const struct rr_header *h, const uint8_t *records, gsize size)
{
    if (is_x86(h) && h->xcr0)
        return h->xcr0;
    for (gsize at = 0; at + CPUID_RECORD_BYTES <= size; at += CPUID_RECORD_BYTES) {
        uint32_t leaf = load_le32(records + at), subleaf = load_le32(records + at + 4);
        if (leaf == CPUID_GETXSAVE && (subleaf == 0 || subleaf == CPUID_ANY_SUBLEAF))
            return ((uint64_t)load_le32(records + at + 20) << 32) | load_le32(records + at + 8);
    }
    return 3;
}

static void append_cpuid_records(GString *j, const uint8_t *records, gsize size)
{
    g_string_append(j, "  \"cpuidRecords\":[");
    for (gsize at = 0; at + CPUID_RECORD_BYTES <= size; at += CPUID_RECORD_BYTES) {
        const uint8_t *r = records + at;
        g_string_append_printf(j, "%s\n    [%u,%u,%u,%u,%u,%u]", at ? "," : "", load_le32(r), load_le32(r + 4),
                               load_le32(r + 8), load_le32(r + 12), load_le32(r + 16), load_le32(r + 20));
    }
    g_string_append(j, "\n  ],\n");
}

void rr_add_traceinfo(struct rr_state *state)
{
    const struct rr_header *h = &state->header;
    if (!rr_accepts(h))
        return;
    gsize size = 0;
    const uint8_t *uuid = g_bytes_get_data(h->uuid, &size);
    GString *j = g_string_new("{\n  \"uuid\":[");
    for (gsize i = 0; i < size; i++)
        g_string_append_printf(j, "%s%u", i ? "," : "", uuid[i]);
    const uint8_t *records = NULL;
    size = 0;
    if (is_x86(h))
        records = g_bytes_get_data(h->cpuid_records, &size);
    g_string_append_printf(j, "],\n  \"xcr0\":%" PRIu64 ",\n  \"bindToCpu\":%d,\n  \"cpuidFaulting\":%s,\n"
                           "  \"requiredForwardCompatibilityVersion\":%d,\n  \"ticksSemantics\":\"%s\",\n",
                           xcr0_of(h, records, size), h->bind_to_cpu,
                           is_x86(h) && h->has_cpuid_faulting ? "true" : "false", h->required_forward_compatibility,
                           h->ticks_semantics == 0 ? "rcb" : "branches");
    append_cpuid_records(j, records, size);
    if (h->chaos_mode == 1 || h->chaos_mode == 2)
        g_string_append_printf(j, "  \"chaosMode\":%s,\n", h->chaos_mode == 1 ? "true" : "false");
    if (h->chaos_mode == 1)
        g_string_append_printf(j, "  \"exclusionRange\": { \"start\": %" PRIu64 ", \"end\": %" PRIu64 " },\n",
                               h->exclusion_start, h->exclusion_end);
    rr_environ_append(state, j);
    g_string_append(j, "}\n");
    tree_add_string(state->trace->tree, TREE_ROOT, "rr-traceinfo.json", j);
}
