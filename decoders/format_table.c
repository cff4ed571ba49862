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

/* A format name as users write it: case, '-', '_' and a leading "llvm"
 * ignored, so "sp-rtrace", "sprtrace" (its docs' file name), "XRay" and
 * "llvm-xray" all name a format. */
static void fold_name(const char *name, char *out, size_t size)
{
    size_t n = 0;
    for (; *name && n + 1 < size; name++)
        if (*name != '-' && *name != '_')
            out[n++] = (char)g_ascii_tolower(*name);
    out[n] = '\0';
    if (strncmp(out, "llvm", 4) == 0 && out[4])
        memmove(out, out + 4, n - 4 + 1);
}

const struct format *format_find(const char *name)
{
    char wanted[32], known[32];
    if (strlen(name) >= sizeof wanted)
        return NULL;
    fold_name(name, wanted, sizeof wanted);
    for (size_t i = 0; format_table[i]; i++) {
        fold_name(format_table[i]->name, known, sizeof known);
        if (strcmp(known, wanted) == 0)
            return format_table[i];
    }
    return NULL;
}

char *format_names(void)
{
    GString *names = g_string_new(NULL);
    for (size_t i = 0; format_table[i]; i++)
        g_string_append_printf(names, "%s%s", i ? ", " : "", format_table[i]->name);
    return g_string_free(names, FALSE);
}
