/* Number formatting without printf's per-call allocation (g_string_append_printf
 * goes through g_vasprintf): the hot path of rendering a million calls. */
#ifndef TRACEFS_APITRACE_FMT_H
#define TRACEFS_APITRACE_FMT_H

#include <glib.h>
#include <stdint.h>
#include "text.h"

static inline void at_append_u64(GString *out, uint64_t v)
{
    char buf[24];
    char *p = buf + sizeof buf;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    text_append(out, p, (size_t)(buf + sizeof buf - p));
}

static inline void at_append_i64(GString *out, int64_t v)
{
    if (v < 0) {
        g_string_append_c(out, '-');
        at_append_u64(out, 0 - (uint64_t)v);
        return;
    }
    at_append_u64(out, (uint64_t)v);
}

static inline void at_append_hex(GString *out, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char buf[20];
    char *p = buf + sizeof buf;
    do {
        *--p = digits[v & 15];
        v >>= 4;
    } while (v);
    text_append(out, p, (size_t)(buf + sizeof buf - p));
}

/* %.*g as C++ streams print floats (precision 7) and doubles (16). */
static inline void at_append_real(GString *out, double v, int precision)
{
    text_general_number(out, v, precision);
}

#endif
