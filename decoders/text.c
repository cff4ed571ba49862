/* JSON, hex and base64 rendering shared by all formats. */
#include <math.h>
#include <string.h>
#include "text.h"

static const char hex_digits[] = "0123456789abcdef";

const char text_digit_pairs[200] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";

void text_copy_long(char *to, const char *from, size_t n)
{
    memcpy(to, from, n);
}

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

/* Appends the JSON escape of c: a byte that cannot stand as itself (a
 * control character, a quote or backslash, or a byte of no valid UTF-8
 * sequence, shown as the code point of the same value). */
static void json_escape_byte(GString *out, unsigned char c)
{
    switch (c) {
    case '"': g_string_append(out, "\\\""); return;
    case '\\': g_string_append(out, "\\\\"); return;
    case '\n': g_string_append(out, "\\n"); return;
    case '\r': g_string_append(out, "\\r"); return;
    case '\t': g_string_append(out, "\\t"); return;
    case '\b': g_string_append(out, "\\b"); return;
    case '\f': g_string_append(out, "\\f"); return;
    default: {
        char escaped[6] = { '\\', 'u', '0', '0', hex_digits[c >> 4], hex_digits[c & 15] };
        g_string_append_len(out, escaped, sizeof escaped);
    }
    }
}

/* ASCII that stands as itself in a JSON string: 0x20-0x7f but '"' (0x22)
 * and '\\' (0x5c). */
static const struct byte_set json_plain = { { 0xfffffffb00000000u, 0xffffffffefffffffu, 0, 0 } };

/* Nonzero when one of the 8 bytes in x is not plain (json_plain): below
 * 0x20, '"', '\\', or 0x80 and above.  Exact as a yes or no; which byte it
 * is, the byte loop finds. */
static inline uint64_t json_special_in_word(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, high = ones * 0x80;
    uint64_t quote = x ^ (ones * '"'), backslash = x ^ (ones * '\\');
    uint64_t below_space = (x - ones * 0x20) & ~x;
    uint64_t is_quote = (quote - ones) & ~quote, is_backslash = (backslash - ones) & ~backslash;
    return (below_space | is_quote | is_backslash | x) & high;
}

/* Bytes that stand as themselves are copied a run at a time: events.json
 * is mostly strings, and a call per byte led its profile. */
void text_json_string(GString *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t run = 0;
    size_t i = 0;
    text_append_c(out, '"');
    while (i < len) {
        uint64_t word;
        if (len - i >= sizeof word) {
            memcpy(&word, p + i, sizeof word);
            if (!json_special_in_word(word)) {
                i += sizeof word;
                continue;
            }
        }
        unsigned char c = p[i];
        if (byte_set_has(&json_plain, c)) {
            i++;
            continue;
        }
        size_t sequence = c >= 0x80 ? utf8_sequence(p + i, len - i) : 0;
        if (sequence) {
            i += sequence;
            continue;
        }
        text_append(out, s + run, i - run);
        json_escape_byte(out, c);
        run = ++i;
    }
    if (run < len) /* an empty name may come as NULL, and NULL + 0 is undefined */
        text_append(out, s + run, len - run);
    text_append_c(out, '"');
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
    size_t start = out->len;
    g_string_set_size(out, start + 2 * len);
    char *digits = out->str + start;
    for (size_t i = 0; i < len; i++) {
        digits[2 * i] = hex_digits[data[i] >> 4];
        digits[2 * i + 1] = hex_digits[data[i] & 15];
    }
}

void text_csv_field(GString *out, const char *s, size_t len, int quote_empty)
{
    int quote = len == 0 ? quote_empty
                         : memchr(s, ',', len) || memchr(s, '"', len) || memchr(s, '\n', len) || memchr(s, '\r', len);
    if (!quote) {
        g_string_append_len(out, s, (gssize)len);
        return;
    }
    text_append_quoted(out, s, len, '"');
}

void text_append_quoted(GString *out, const char *s, size_t len, char quote)
{
    g_string_append_c(out, quote);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == quote)
            g_string_append_c(out, quote);
        g_string_append_c(out, s[i]);
    }
    g_string_append_c(out, quote);
}
