/* Rendering helpers shared by every format's views: JSON strings that are
 * always valid (escaped, non-UTF-8 bytes as \u00XX), and hex. */
#ifndef TRACEFS_TEXT_H
#define TRACEFS_TEXT_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Appends "..." with JSON escaping; invalid UTF-8 bytes become \u00XX. */
void text_json_string(GString *out, const char *s, size_t len);
void text_json_cstring(GString *out, const char *s);
/* A double as JSON (null for NaN/inf). */
void text_json_double(GString *out, double value);
/* printf's "%.*g" (precision 1..17), exactly, without printf for the
 * common cases (text_number.c). */
void text_general_number(GString *out, double value, int precision);
/* printf's "%.*f" (decimals 0..19), exactly, likewise. */
void text_fixed_number(GString *out, double value, int decimals);
void text_hex(GString *out, const uint8_t *data, size_t len);
/* A CSV field (RFC 4180): quoted, with its quotes doubled, when it holds a
 * comma, quote or line break, or is empty and quote_empty is set. */
void text_csv_field(GString *out, const char *s, size_t len, int quote_empty);
/* s between two quote characters, each quote character in it doubled (CSV's
 * "", YAML's single-quoted ''). */
void text_append_quoted(GString *out, const char *s, size_t len, char quote);

/* memcpy for the short pieces renderers copy by the million (names,
 * numbers, separators): up to 16 bytes as two overlapping fixed-size
 * copies, which compile to plain loads and stores, not a call.  Longer
 * ones go to text_copy_long, out of line: inlined, gcc's bounds checks
 * (-Warray-bounds) took a copy from a small array for one of any size. */
void text_copy_long(char *to, const char *from, size_t n);

static inline void text_copy(char *to, const char *from, size_t n)
{
    if (n > 16) {
        text_copy_long(to, from, n);
    } else if (n >= 8) {
        uint64_t head, tail;
        memcpy(&head, from, 8);
        memcpy(&tail, from + n - 8, 8);
        memcpy(to, &head, 8);
        memcpy(to + n - 8, &tail, 8);
    } else if (n >= 4) {
        uint32_t head, tail;
        memcpy(&head, from, 4);
        memcpy(&tail, from + n - 4, 4);
        memcpy(to, &head, 4);
        memcpy(to + n - 4, &tail, 4);
    } else if (n > 0) {
        to[0] = from[0];
        to[n / 2] = from[n / 2];
        to[n - 1] = from[n - 1];
    }
}

/* g_string_append_len without a call when the bytes fit (glib 2.74 has no
 * inline path): renderers append millions of short pieces. */
static inline void text_append(GString *out, const char *s, size_t n)
{
    if (n < out->allocated_len - out->len) {
        memcpy(out->str + out->len, s, n);
        out->len += n;
        out->str[out->len] = '\0';
        return;
    }
    g_string_append_len(out, s, (gssize)n);
}

static inline void text_append_cstring(GString *out, const char *s)
{
    text_append(out, s, strlen(s));
}

/* g_string_append_c without a call when the byte fits. */
static inline void text_append_c(GString *out, char c)
{
    if (out->allocated_len - out->len > 1) {
        out->str[out->len++] = c;
        out->str[out->len] = '\0';
        return;
    }
    g_string_append_c(out, c);
}

/* "00" "01" ... "99": decimal digits two at a time. */
extern const char text_digit_pairs[200];

/* Room for `n` more bytes and the NUL after them, the text unchanged. */
static inline void text_reserve(GString *out, size_t n)
{
    if (out->allocated_len - out->len > n)
        return;
    gsize len = out->len;
    g_string_set_size(out, len + n);
    g_string_truncate(out, len);
}

/* Decimal digits of a value, 1 to 20. */
static inline unsigned text_decimal_digits(uint64_t value)
{
    unsigned digits = 1;
    while (value >= 10000) {
        value /= 10000;
        digits += 4;
    }
    return digits + (value >= 10) + (value >= 100) + (value >= 1000);
}

/* The decimal digits of `value` at `out` (room for 20), no NUL; returns
 * how many.  Written two at a time, from the last. */
static inline unsigned text_format_u64(char *out, uint64_t value)
{
    unsigned digits = text_decimal_digits(value);
    char *at = out + digits;
    while (value >= 100) {
        at -= 2;
        memcpy(at, text_digit_pairs + 2 * (value % 100), 2);
        value /= 100;
    }
    if (value >= 10) {
        at -= 2;
        memcpy(at, text_digit_pairs + 2 * value, 2);
    } else {
        *--at = (char)('0' + value);
    }
    return digits;
}

/* printf's %llu and %lld without printf: renderers print millions of
 * numbers, and g_string_append_printf allocates for each.  The digits are
 * written in place: a copy of a variable few bytes would be a call. */
static inline void text_append_u64(GString *out, uint64_t value)
{
    text_reserve(out, text_decimal_digits(value));
    out->len += text_format_u64(out->str + out->len, value);
    out->str[out->len] = '\0';
}

/* printf's %llx without printf. */
static inline void text_append_hex(GString *out, uint64_t value)
{
    char text[16];
    size_t at = sizeof text;
    do {
        text[--at] = "0123456789abcdef"[value & 15];
        value >>= 4;
    } while (value);
    text_append(out, text + at, sizeof text - at);
}

/* printf's %0*llx without printf: hex zero-padded to `width` digits
 * (rr's maps lines, one per mmap of the trace, and FXT's \xHH escapes). */
static inline void text_append_hex_padded(GString *out, uint64_t value, unsigned width)
{
    unsigned digits = 1;
    for (uint64_t rest = value >> 4; rest; rest >>= 4)
        digits++;
    for (; digits < width; digits++)
        text_append_c(out, '0');
    text_append_hex(out, value);
}

/* A JSON string "0x<hex>": how every view writes an address (JSON readers
 * that hold numbers as doubles, jq 1.6 and JavaScript, round above 2^53). */
static inline void text_json_hex(GString *out, uint64_t value)
{
    text_append(out, "\"0x", 3);
    text_append_hex(out, value);
    text_append_c(out, '"');
}

static inline void text_append_i64(GString *out, int64_t value)
{
    if (value < 0) {
        text_append_c(out, '-');
        text_append_u64(out, 0 - (uint64_t)value);
        return;
    }
    text_append_u64(out, (uint64_t)value);
}

/* A set of byte values, one bit each: a member test is one load and one
 * test, where the renderers' inner loops had a chain of comparisons a byte. */
struct byte_set {
    uint64_t word[4];
};

static inline int byte_set_has(const struct byte_set *set, unsigned char c)
{
    return (int)((set->word[c >> 6] >> (c & 63)) & 1);
}

/* Little/big-endian loads from unaligned bytes. */
static inline uint16_t load_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t load_le32(const uint8_t *p)
{ return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24); }
static inline uint64_t load_le64(const uint8_t *p) { return (uint64_t)load_le32(p) | ((uint64_t)load_le32(p + 4) << 32); }
static inline uint16_t load_be16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t load_be32(const uint8_t *p)
{ return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3]; }
static inline uint64_t load_be64(const uint8_t *p) { return ((uint64_t)load_be32(p) << 32) | load_be32(p + 4); }

#endif
