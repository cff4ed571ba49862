/* The shared renderers: JSON strings are exact (every byte either stands as
 * itself inside valid UTF-8 or is escaped) and equal a plain byte-at-a-time
 * rendering on every input; hex is two lower-case digits a byte. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "text.h"

static char *json(const char *s, size_t len)
{
    GString *out = g_string_new("prefix:");
    text_json_string(out, s, len);
    g_assert_true(g_str_has_prefix(out->str, "prefix:"));
    char *rendered = g_strdup(out->str + strlen("prefix:"));
    g_string_free(out, TRUE);
    return rendered;
}

static void assert_json(const char *s, size_t len, const char *expected)
{
    char *rendered = json(s, len);
    g_assert_cmpstr(rendered, ==, expected);
    g_free(rendered);
}

/* The length from the literal itself: its bytes may include NUL. */
#define ASSERT_JSON(literal, expected) assert_json(literal, sizeof(literal) - 1, expected)

static void test_json_examples(void)
{
    ASSERT_JSON("", "\"\"");
    assert_json(NULL, 0, "\"\""); /* an empty name from a record comes as NULL */
    ASSERT_JSON("glDrawArrays", "\"glDrawArrays\"");
    ASSERT_JSON("a\"b\\c", "\"a\\\"b\\\\c\"");
    ASSERT_JSON("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
    ASSERT_JSON("\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\"");
    ASSERT_JSON("nul\0end", "\"nul\\u0000end\"");
    /* Valid UTF-8 of 2, 3 and 4 bytes stands as itself. */
    ASSERT_JSON("\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\"");
    ASSERT_JSON("\xe2\x82\xac", "\"\xe2\x82\xac\"");
    ASSERT_JSON("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
    /* Not UTF-8: overlong, surrogate, beyond U+10FFFF, cut short, lone
     * continuation byte: each byte escaped on its own. */
    ASSERT_JSON("\xc0\x80", "\"\\u00c0\\u0080\"");
    ASSERT_JSON("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");
    ASSERT_JSON("\xf5\x80\x80\x80", "\"\\u00f5\\u0080\\u0080\\u0080\"");
    ASSERT_JSON("ab\xe2\x82", "\"ab\\u00e2\\u0082\"");
    ASSERT_JSON("\x80z", "\"\\u0080z\"");
}

/* The reference: escaping one byte at a time, without copying runs whole. */
static size_t oracle_utf8(const unsigned char *s, size_t left)
{
    gunichar c = g_utf8_get_char_validated((const char *)s, (gssize)left);
    if (c == (gunichar)-1 || c == (gunichar)-2 || s[0] < 0x80)
        return 0;
    return (size_t)g_unichar_to_utf8(c, NULL);
}

static void oracle_json(GString *out, const unsigned char *s, size_t len)
{
    g_string_append_c(out, '"');
    for (size_t i = 0; i < len;) {
        size_t n = oracle_utf8(s + i, len - i);
        if (n) {
            g_string_append_len(out, (const char *)s + i, (gssize)n);
            i += n;
            continue;
        }
        unsigned char c = s[i++];
        const char *named = strchr("\"\\\n\r\t\b\f", c);
        if (c && named)
            g_string_append_printf(out, "\\%c", "\"\\nrtbf"[named - "\"\\\n\r\t\b\f"]);
        else if (c < 0x20 || c >= 0x80)
            g_string_append_printf(out, "\\u%04x", c);
        else
            g_string_append_c(out, (char)c);
    }
    g_string_append_c(out, '"');
}

static void test_json_equals_byte_at_a_time(void)
{
    /* Bytes drawn mostly from the interesting ones, so that runs, escapes
     * and valid and broken sequences all meet at every position. */
    static const unsigned char alphabet[] = { 'a', 'Z', ' ', '"', '\\', '\n', 0, 0x1f, 0x7f,
                                              0x80, 0xbf, 0xc2, 0xc3, 0xe0, 0xe2, 0xed, 0xf0, 0xf4, 0xf5, 0xff };
    GRand *rand = g_rand_new_with_seed(20261122);
    unsigned char input[64];
    for (int round = 0; round < 200000; round++) {
        size_t len = (size_t)g_rand_int_range(rand, 0, sizeof input + 1);
        for (size_t i = 0; i < len; i++)
            input[i] = g_rand_boolean(rand) ? alphabet[g_rand_int_range(rand, 0, sizeof alphabet)]
                                            : (unsigned char)g_rand_int_range(rand, 0, 256);
        GString *expected = g_string_new(NULL);
        oracle_json(expected, input, len);
        char *rendered = json((const char *)input, len);
        g_assert_cmpstr(rendered, ==, expected->str);
        g_assert_true(g_utf8_validate(rendered, -1, NULL));
        g_free(rendered);
        g_string_free(expected, TRUE);
    }
    g_rand_free(rand);
}

/* Runs of plain bytes long enough to be skipped a word at a time, with one
 * byte of every value at every position of them: each byte that is not
 * plain must be found wherever it sits in its word. */
static void test_json_one_byte_in_plain_run(void)
{
    unsigned char input[24];
    for (size_t len = 1; len <= sizeof input; len++) {
        for (size_t at = 0; at < len; at++) {
            for (unsigned value = 0; value < 256; value++) {
                memset(input, 'q', len);
                input[at] = (unsigned char)value;
                GString *expected = g_string_new(NULL);
                oracle_json(expected, input, len);
                char *rendered = json((const char *)input, len);
                g_assert_cmpstr(rendered, ==, expected->str);
                g_free(rendered);
                g_string_free(expected, TRUE);
            }
        }
    }
}

/* render(value, digits) equals snprintf(format, digits, value). */
static void assert_like_printf(void (*render)(GString *, double, int), const char *format, double value, int digits)
{
    char expected[400];
    snprintf(expected, sizeof expected, format, digits, value);
    GString *out = g_string_new("x");
    render(out, value, digits);
    if (strcmp(out->str + 1, expected) != 0)
        g_error("%s of %a with %d: %s, printf says %s", format, value, digits, out->str + 1, expected);
    g_string_free(out, TRUE);
}

static void assert_general(double value, int precision)
{
    assert_like_printf(text_general_number, "%.*g", value, precision);
}

static double random_double(GRand *rand)
{
    uint64_t bits = ((uint64_t)g_rand_int(rand) << 32) | g_rand_int(rand);
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* Equal to printf on: every precision at the edges of the notation switch
 * and of rounding (ties to even included), random floats as a GL trace
 * holds them (n/100, n/1000 as float), random bit patterns of floats and
 * doubles, and doubles with few significant bits. */
static void test_general_number_equals_printf(void)
{
    static const double edges[] = { 0.0, -0.0, 1, -1, 0.5, 1.5, 2.5, 0.25, 0.125, 1e-4, 9.99999e-5, 1e-5, 0.1, 0.2,
                                    0.3, 0.7, 1e6, 9999999, 9999999.5, 10000000, 1048576.5, 1048577.5, 123456.75,
                                    99999.995, 0.00012345675, 1e15, 1e16, 1e17, 123456789012345678.0, 5e-324,
                                    1.7976931348623157e308, NAN, INFINITY, -INFINITY };
    for (size_t i = 0; i < G_N_ELEMENTS(edges); i++)
        for (int precision = 1; precision <= 17; precision++) {
            assert_general(edges[i], precision);
            assert_general(-edges[i], precision);
            assert_general((float)edges[i], precision);
        }
    GRand *rand = g_rand_new_with_seed(20261122);
    for (int round = 0; round < 300000; round++) {
        int n = g_rand_int_range(rand, -2000000, 2000000);
        assert_general((float)(n / 100.0), 7);
        assert_general((float)(n / 1000.0), 7);
        assert_general(n / 1000.0, 16);
        float f;
        uint32_t bits = g_rand_int(rand);
        memcpy(&f, &bits, sizeof f);
        assert_general(f, 7);
        assert_general(f, g_rand_int_range(rand, 1, 18));
        assert_general(random_double(rand), 16);
        assert_general(ldexp(g_rand_int_range(rand, -100000, 100000), g_rand_int_range(rand, -40, 30)),
                       g_rand_int_range(rand, 1, 18));
        assert_general(g_rand_int_range(rand, 0, 20000000) + 0.5, 7);   /* ties */
    }
    g_rand_free(rand);
}

/* The next double away from zero (up) or towards it, by its bits: this
 * test links no libm. */
static double next_double(double value, gboolean up)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    bits = up ? bits + 1 : bits - 1;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static double power_of_ten(int k)
{
    char text[16];
    snprintf(text, sizeof text, "1e%d", k);
    return g_ascii_strtod(text, NULL);
}

/* Every power of ten the fast path meets (and the exponent notation's
 * bounds), a few ulps either side, at every precision; then floats spread
 * evenly over all 2^32 bit patterns (a GL trace is mostly floats, printed
 * with 7 digits) and the doubles they widen to, with 16. */
static void test_general_number_sweep(void)
{
    for (int k = -6; k <= 18; k++) {
        double power = power_of_ten(k);
        for (int precision = 1; precision <= 17; precision++) {
            double below = power, above = power;
            for (int step = 0; step < 4; step++) {
                assert_general(below, precision);
                assert_general(above, precision);
                assert_general((float)below, precision);
                assert_general((float)above, precision);
                below = next_double(below, FALSE);
                above = next_double(above, TRUE);
            }
            /* Halfway between two printed numbers, and a hair either side. */
            double half = (1 + 5 * power_of_ten(-precision)) * power;
            assert_general(half, precision);
            assert_general(next_double(half, FALSE), precision);
            assert_general(next_double(half, TRUE), precision);
        }
    }
    for (uint64_t i = 0; i < (UINT64_C(1) << 32); i += 1021) {
        uint32_t bits = (uint32_t)i;
        float f;
        memcpy(&f, &bits, sizeof f);
        assert_general(f, 7);
        if (i % (1021 * 8) == 0)
            assert_general(f, 16);
    }
}

/* text_copy equals memcpy at every length around its size classes, and
 * writes nothing outside the copy. */
static void test_copy(void)
{
    char from[64], to[80], expected[80];
    for (size_t i = 0; i < sizeof from; i++)
        from[i] = (char)('A' + i % 26);
    for (size_t n = 0; n <= 40; n++)
        for (size_t shift = 0; shift < 3; shift++) {
            memset(to, '.', sizeof to);
            memset(expected, '.', sizeof expected);
            text_copy(to + 8 + shift, from + shift, n);
            memcpy(expected + 8 + shift, from + shift, n);
            g_assert_cmpmem(to, sizeof to, expected, sizeof expected);
        }
}

static void assert_fixed(double value, int decimals)
{
    assert_like_printf(text_fixed_number, "%.*f", value, decimals);
}

/* Equal to printf's %f on: rr's times (seconds with microseconds, as
 * `rr dump` prints real_time), exact ties (odd multiples of 2^-k), zeros and
 * negative values that round to zero, huge and tiny values (printf's path),
 * and random bit patterns at every number of decimals. */
static void test_fixed_number_equals_printf(void)
{
    static const double edges[] = { 0.0, -0.0, 1, 0.5, 1.5, 2.5, 0.0078125, 0.0234375, 1.0 / 1024, 1e-7, 4e-7,
                                    5e-7, 6e-7, 0.9999995, 9.5, 91000.000004, 1e15, 1e18, 1.8e19, 2e19, 1e300,
                                    5e-324, 1.7976931348623157e308, NAN, INFINITY };
    for (size_t i = 0; i < G_N_ELEMENTS(edges); i++)
        for (int decimals = 0; decimals <= 20; decimals++) {
            assert_fixed(edges[i], decimals);
            assert_fixed(-edges[i], decimals);
        }
    GRand *rand = g_rand_new_with_seed(20261123);
    for (int round = 0; round < 100000; round++) {
        int64_t micros = g_rand_int_range(rand, 0, 2000000000) * (int64_t)g_rand_int_range(rand, 1, 100000);
        assert_fixed((double)micros / 1e6, 6);
        assert_fixed(91000.0 + g_rand_int_range(rand, 0, 100000000) / 1e6, 6);
        assert_fixed(ldexp(2 * g_rand_int_range(rand, 0, 1 << 30) + 1, -g_rand_int_range(rand, 1, 60)),
                     g_rand_int_range(rand, 0, 20));
        assert_fixed(random_double(rand), g_rand_int_range(rand, 0, 20));
        assert_fixed(ldexp(g_rand_double(rand), g_rand_int_range(rand, -80, 70)), g_rand_int_range(rand, 0, 20));
    }
    g_rand_free(rand);
}

static void test_decimal(void)
{
    static const int64_t values[] = { 0, 1, -1, 9, 10, 4294967295ll, INT64_MAX, INT64_MIN };
    for (size_t i = 0; i < G_N_ELEMENTS(values); i++) {
        GString *out = g_string_new(NULL);
        text_append_i64(out, values[i]);
        g_string_append_c(out, ' ');
        text_append_u64(out, (uint64_t)values[i]);
        char digits[20];
        g_string_append_c(out, ' ');
        g_string_append_len(out, digits, (gssize)text_format_u64(digits, (uint64_t)values[i]));
        char *expected = g_strdup_printf("%" G_GINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT, values[i],
                                         (uint64_t)values[i], (uint64_t)values[i]);
        g_assert_cmpstr(out->str, ==, expected);
        g_free(expected);
        g_string_free(out, TRUE);
    }
}

/* Every digit count, each power of ten and its neighbours, appended to
 * strings of every length around a growth of the buffer: the digits are
 * written in place after making room. */
static void test_decimal_in_place(void)
{
    GString *out = g_string_new(NULL);
    GString *expected = g_string_new(NULL);
    uint64_t power = 1;
    for (int digits = 1; digits <= 20; digits++) {
        uint64_t values[] = { power - 1, power, power + 1, power * 9 + (power - 1) };
        for (size_t v = 0; v < G_N_ELEMENTS(values); v++) {
            for (size_t prefix = 0; prefix < 40; prefix++) {
                g_string_truncate(out, 0);
                g_string_set_size(out, prefix);
                memset(out->str, 'p', prefix);
                text_append_u64(out, values[v]);
                g_string_truncate(expected, 0);
                g_string_set_size(expected, prefix);
                memset(expected->str, 'p', prefix);
                g_string_append_printf(expected, "%" G_GUINT64_FORMAT, values[v]);
                g_assert_cmpuint(out->len, ==, expected->len);
                g_assert_cmpstr(out->str, ==, expected->str);
            }
        }
        if (digits < 20)
            power *= 10;
    }
    g_string_free(out, TRUE);
    g_string_free(expected, TRUE);
}

static void test_hex(void)
{
    GString *out = g_string_new("x=");
    text_hex(out, (const uint8_t *)"\x00\x0f\xa5\xff", 4);
    g_assert_cmpstr(out->str, ==, "x=000fa5ff");
    text_hex(out, NULL, 0);
    g_assert_cmpstr(out->str, ==, "x=000fa5ff");
    g_string_free(out, TRUE);
}

/* Each value and width against printf's %0*llx. */
static void test_hex_padded(void)
{
    static const uint64_t values[] = { 0, 1, 0xf, 0x10, 0xabc, 0x12345678, 0x123456789, UINT64_MAX };
    GString *out = g_string_new(NULL);
    for (size_t v = 0; v < G_N_ELEMENTS(values); v++) {
        for (unsigned width = 0; width <= 18; width++) {
            char *expected = g_strdup_printf("%0*" G_GINT64_MODIFIER "x", (int)width, values[v]);
            g_string_truncate(out, 0);
            text_append_hex_padded(out, values[v], width);
            g_assert_cmpstr(out->str, ==, expected);
            g_free(expected);
        }
    }
    g_string_free(out, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/text/json-examples", test_json_examples);
    g_test_add_func("/text/fixed-number-equals-printf", test_fixed_number_equals_printf);
    g_test_add_func("/text/decimal", test_decimal);
    g_test_add_func("/text/decimal-in-place", test_decimal_in_place);
    g_test_add_func("/text/json-equals-byte-at-a-time", test_json_equals_byte_at_a_time);
    g_test_add_func("/text/json-one-byte-in-plain-run", test_json_one_byte_in_plain_run);
    g_test_add_func("/text/general-number-equals-printf", test_general_number_equals_printf);
    g_test_add_func("/text/general-number-sweep", test_general_number_sweep);
    g_test_add_func("/text/hex", test_hex);
    g_test_add_func("/text/hex-padded", test_hex_padded);
    g_test_add_func("/text/copy", test_copy);
    return g_test_run();
}
