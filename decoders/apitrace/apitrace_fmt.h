/* Floats as apitrace prints them (integers: text_append_u64 and friends). */
#ifndef TRACEFS_APITRACE_FMT_H
#define TRACEFS_APITRACE_FMT_H

#include <glib.h>
#include <stdint.h>
#include "text.h"

/* %.*g as C++ streams print floats (precision 7) and doubles (16). */
static inline void at_append_real(GString *out, double v, int precision)
{
    text_general_number(out, v, precision);
}

#endif
