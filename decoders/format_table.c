#include <string.h>
#include "format.h"

extern const struct format format_rr, format_xray, format_fxt, format_sprtrace, format_apitrace;

/* Probe order matters only for ties; apitrace's brotli container has no
 * magic, so it is last. */
const struct format *const format_table[] = {
#ifdef TRACEFS_FORMAT_RR
    &format_rr,
#endif
#ifdef TRACEFS_FORMAT_XRAY
    &format_xray,
#endif
#ifdef TRACEFS_FORMAT_FXT
    &format_fxt,
#endif
#ifdef TRACEFS_FORMAT_SPRTRACE
    &format_sprtrace,
#endif
#ifdef TRACEFS_FORMAT_APITRACE
    &format_apitrace,
#endif
    NULL,
};

const struct format *format_find(const char *name)
{
    for (size_t i = 0; format_table[i]; i++)
        if (strcmp(format_table[i]->name, name) == 0)
            return format_table[i];
    return NULL;
}

char *format_names(void)
{
    GString *names = g_string_new(NULL);
    for (size_t i = 0; format_table[i]; i++)
        g_string_append_printf(names, "%s%s", i ? ", " : "", format_table[i]->name);
    return g_string_free(names, FALSE);
}
