/* JSON, hex and base64 rendering shared by all formats. */
#include <math.h>
#include <string.h>
#include "text.h"

static const char hex_digits[] = "0123456789abcdef";

/* Length of a valid UTF-8 sequence at s (at most `left` bytes), 0 if invalid. */
static size_t utf8_sequence(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    size_t need;
    uint32_t min, cp;
    if (c < 0xC2) return 0;
    if (c < 0xE0) { need = 2; min = 0x80; cp = c & 0x1F; }
    else if (c < 0xF0) { need = 3; min = 0x800; cp = c & 0x0F; }
    else if (c < 0xF5) { need = 4; min = 0x10000; cp = c & 0x07; }
    else return 0;
    if (left < need) return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return need;
}

void text_json_string(GString *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    g_string_append_c(out, '"');
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        if (c >= 0x80) {
            size_t n = utf8_sequence(p + i, len - i);
            if (n) {
                g_string_append_len(out, (const char *)p + i, (gssize)n);
                i += n;
            } else {
                g_string_append_printf(out, "\\u00%c%c", hex_digits[c >> 4], hex_digits[c & 15]);
                i++;
            }
            continue;
        }
        switch (c) {
        case '"': g_string_append(out, "\\\""); break;
        case '\\': g_string_append(out, "\\\\"); break;
        case '\n': g_string_append(out, "\\n"); break;
        case '\r': g_string_append(out, "\\r"); break;
        case '\t': g_string_append(out, "\\t"); break;
        case '\b': g_string_append(out, "\\b"); break;
        case '\f': g_string_append(out, "\\f"); break;
        default:
            if (c < 0x20)
                g_string_append_printf(out, "\\u00%c%c", hex_digits[c >> 4], hex_digits[c & 15]);
            else
                g_string_append_c(out, (char)c);
        }
        i++;
    }
    g_string_append_c(out, '"');
}

void text_json_cstring(GString *out, const char *s)
{
    if (!s) {
        g_string_append(out, "null");
        return;
    }
    text_json_string(out, s, strlen(s));
}

void text_json_double(GString *out, double value)
{
    if (!isfinite(value)) {
        g_string_append(out, "null");
        return;
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append(out, g_ascii_dtostr(buf, sizeof buf, value));
}

void text_hex(GString *out, const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        g_string_append_c(out, hex_digits[data[i] >> 4]);
        g_string_append_c(out, hex_digits[data[i] & 15]);
    }
}

void text_base64(GString *out, const uint8_t *data, size_t len)
{
    gchar *encoded = g_base64_encode(data, len);
    g_string_append(out, encoded);
    g_free(encoded);
}
