/* YAML scalars exactly as LLVM's YAML writer prints them (llvm-xray convert
 * output is compared byte for byte): the quoting decision of needsQuotes()
 * and the escaping of yaml::escape(). */
#include <string.h>
#include "text.h"
#include "xray_format.h"

enum quoting { QUOTE_NONE, QUOTE_SINGLE, QUOTE_DOUBLE };

static size_t skip_digits(const char *s, size_t i, size_t n)
{
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    return i;
}

static gboolean all_of(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, s[i]) || s[i] == '\0')
            return FALSE;
    return TRUE;
}

static gboolean equals(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static gboolean is_numeric(const char *s, size_t n)
{
    if (n == 0 || equals(s, n, "+") || equals(s, n, "-"))
        return FALSE;
    if (equals(s, n, ".nan") || equals(s, n, ".NaN") || equals(s, n, ".NAN"))
        return TRUE;
    size_t sign = s[0] == '-' || s[0] == '+';   /* t: s after its sign */
    const char *t = s + sign;
    size_t tn = n - sign;
    if (equals(t, tn, ".inf") || equals(t, tn, ".Inf") || equals(t, tn, ".INF"))
        return TRUE;
    if (n >= 2 && s[0] == '0' && s[1] == 'o')
        return n > 2 && all_of(s + 2, n - 2, "01234567");
    if (n >= 2 && s[0] == '0' && s[1] == 'x')
        return n > 2 && all_of(s + 2, n - 2, "0123456789abcdefABCDEF");
    if (tn > 0 && t[0] == '.' && (tn == 1 || !(t[1] >= '0' && t[1] <= '9')))
        return FALSE;
    if (tn > 0 && (t[0] == 'e' || t[0] == 'E'))
        return FALSE;
    size_t i = skip_digits(t, 0, tn);
    if (i == tn)
        return TRUE;
    if (t[i] == '.') {
        i = skip_digits(t, i + 1, tn);
        if (i == tn)
            return TRUE;
    }
    if (t[i] != 'e' && t[i] != 'E')
        return FALSE;
    i++;
    if (i == tn)
        return FALSE;
    if (t[i] == '+' || t[i] == '-') {
        i++;
        if (i == tn)
            return FALSE;
    }
    return skip_digits(t, i, tn) == tn;
}

static gboolean is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static enum quoting needs_quotes(const char *s, size_t n)
{
    if (n == 0)
        return QUOTE_SINGLE;
    enum quoting q = QUOTE_NONE;
    if (is_space((unsigned char)s[0]) || is_space((unsigned char)s[n - 1]) || is_numeric(s, n) ||
        equals(s, n, "null") || equals(s, n, "Null") || equals(s, n, "NULL") || equals(s, n, "~") ||
        equals(s, n, "true") || equals(s, n, "True") || equals(s, n, "TRUE") ||
        equals(s, n, "false") || equals(s, n, "False") || equals(s, n, "FALSE") ||
        (strchr("-?:\\,[]{}#&*!|>'\"%@`", s[0]) && s[0] != '\0'))
        q = QUOTE_SINGLE;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (g_ascii_isalnum(c) || c == '_' || c == '-' || c == '^' || c == '.' || c == ',' || c == ' ' || c == '\t')
            continue;
        if (c == '\n' || c == '\r') {
            q = QUOTE_SINGLE;
            continue;
        }
        if (c == 0x7f || c <= 0x1f || (c & 0x80))
            return QUOTE_DOUBLE;
        q = QUOTE_SINGLE;
    }
    return q;
}

/* The code point of the UTF-8 sequence at s (llvm's decodeUTF8), or length 0. */
static size_t decode_utf8(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n >= 2 && (s[0] & 0xe0) == 0xc0 && (s[1] & 0xc0) == 0x80) {
        *cp = ((s[0] & 0x1fu) << 6) | (s[1] & 0x3fu);
        if (*cp >= 0x80)
            return 2;
    }
    if (n >= 3 && (s[0] & 0xf0) == 0xe0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80) {
        *cp = ((s[0] & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
        if (*cp >= 0x800 && (*cp < 0xd800 || *cp > 0xdfff))
            return 3;
    }
    if (n >= 4 && (s[0] & 0xf8) == 0xf0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 &&
        (s[3] & 0xc0) == 0x80) {
        *cp = ((s[0] & 0x07u) << 18) | ((s[1] & 0x3fu) << 12) | ((s[2] & 0x3fu) << 6) | (s[3] & 0x3fu);
        if (*cp >= 0x10000 && *cp <= 0x10ffff)
            return 4;
    }
    return 0;
}

/* yaml::escape's escapes of one letter, by byte (NULL: none). */
static const char *const short_escapes[0x80] = {
    [0] = "\\0", [7] = "\\a", [8] = "\\b", [9] = "\\t", [10] = "\\n", [11] = "\\v", [12] = "\\f",
    [13] = "\\r", [27] = "\\e", ['"'] = "\\\"", ['\\'] = "\\\\",
};

static void append_escaped(GString *out, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = u[i];
        if (c < 0x80 && short_escapes[c]) {
            g_string_append(out, short_escapes[c]);
            continue;
        }
        if (c < 0x20) {
            g_string_append_printf(out, "\\x%02X", c);
            continue;
        }
        if (!(c & 0x80)) {
            g_string_append_c(out, (char)c);
            continue;
        }
        uint32_t cp = 0;
        size_t len = decode_utf8(u + i, n - i, &cp);
        if (len == 0) {
            g_string_append(out, "\xef\xbf\xbd");   /* llvm stops at the first invalid byte */
            return;
        }
        if (cp == 0x85)
            g_string_append(out, "\\N");
        else if (cp == 0xa0)
            g_string_append(out, "\\_");
        else if (cp == 0x2028)
            g_string_append(out, "\\L");
        else if (cp == 0x2029)
            g_string_append(out, "\\P");
        else
            g_string_append_len(out, s + i, (gssize)len);
        i += len - 1;
    }
}

void xray_yaml_scalar(GString *out, const char *s, size_t len)
{
    switch (needs_quotes(s, len)) {
    case QUOTE_NONE:
        g_string_append_len(out, s, (gssize)len);
        return;
    case QUOTE_SINGLE:
        text_append_quoted(out, s, len, '\'');
        return;
    case QUOTE_DOUBLE:
        g_string_append_c(out, '"');
        append_escaped(out, s, len);
        g_string_append_c(out, '"');
        return;
    }
}
