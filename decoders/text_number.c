/* printf's "%.*g" and "%.*f" without printf for the numbers traces are full of.
 * glibc prints every double through exact multi-precision arithmetic, which
 * would be a seventh of apitrace's rendering profile (a GL trace is mostly
 * floats such as 0.2 or -0.6).  A number whose exact value, scaled to the
 * wanted digits, fits in 64 bits is rounded here with integers, exactly as
 * glibc rounds (to nearest, ties to even); every other goes to printf. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "text.h"

static const uint64_t powers_of_ten[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
    1000000000000000000ull, 10000000000000000000ull,
};

/* The decimal exponent of x in [1e-4, 10^precision): the largest k with
 * x >= 10^k.  Each double 10^k used for k < 0 lies above the true power,
 * so no double falls between them and the comparison is exact. */
static int decimal_exponent(double x, int precision)
{
    static const double below_one[4] = { 1e-4, 1e-3, 1e-2, 1e-1 };
    int k;
    if (x < 1) {
        for (k = -4; k < -1 && x >= below_one[k + 5]; k++)
            ;
        return k;
    }
    for (k = 0; k + 1 < precision && x >= (double)powers_of_ten[k + 1]; k++)
        ;
    return k;
}

/* round(mantissa * 2^binary_exponent * 10^scale) into *digits, or FALSE
 * when it does not fit in 64 bits.  The product takes 128 bits: a time in
 * seconds such as 91000.000004 has a 53-bit mantissa, times 10^6 for %f. */
static gboolean scaled_digits(uint64_t mantissa, int binary_exponent, int scale, uint64_t *digits)
{
    if (scale < 0 || scale > 19 || mantissa >> 53)
        return FALSE;
    if (binary_exponent < 0 && binary_exponent > -64 && mantissa <= UINT64_MAX / powers_of_ten[scale]) {
        /* A float's 24 bits times 10^10 at most: 64-bit arithmetic will do. */
        uint64_t small = mantissa * powers_of_ten[scale];
        int right = -binary_exponent;
        uint64_t quotient = small >> right, remainder = small & ((UINT64_C(1) << right) - 1);
        uint64_t half = UINT64_C(1) << (right - 1);
        *digits = quotient + (remainder > half || (remainder == half && (quotient & 1)));
        return TRUE;
    }
    unsigned __int128 product = (unsigned __int128)mantissa * powers_of_ten[scale];   /* < 2^117 */
    if (binary_exponent >= 0) {
        if (binary_exponent >= 64 || product > (UINT64_MAX >> binary_exponent))
            return FALSE;
        *digits = (uint64_t)product << binary_exponent;
        return TRUE;
    }
    int shift = -binary_exponent;
    if (shift >= 128)
        return FALSE;
    unsigned __int128 one = 1;
    unsigned __int128 quotient = product >> shift;
    unsigned __int128 remainder = product & ((one << shift) - 1);
    unsigned __int128 half = one << (shift - 1);
    if (remainder > half || (remainder == half && (quotient & 1)))
        quotient++;
    if (quotient > UINT64_MAX)
        return FALSE;
    *digits = (uint64_t)quotient;
    return TRUE;
}

/* |value| = mantissa * 2^binary_exponent exactly, the mantissa odd (or 0).
 * Read from the bits: frexp and ldexp were two calls per number. */
static uint64_t exact_parts(double magnitude, int *binary_exponent)
{
    uint64_t bits;
    memcpy(&bits, &magnitude, sizeof bits);
    uint64_t fraction = bits & ((UINT64_C(1) << 52) - 1);
    int biased = (int)((bits >> 52) & 0x7ff);
    if (biased == 0 && fraction == 0) {
        *binary_exponent = 0;
        return 0;
    }
    /* Subnormals (biased 0) have no implicit bit and the exponent of biased 1. */
    uint64_t mantissa = biased ? fraction | (UINT64_C(1) << 52) : fraction;
    int zeros = __builtin_ctzll(mantissa);
    *binary_exponent = (biased ? biased : 1) - 1075 + zeros;
    return mantissa >> zeros;
}

/* Writes the `count` low decimal digits of `value` ending at `end`, two at
 * a time. */
static void write_digits(char *end, uint64_t value, int count)
{
    for (; count >= 2; count -= 2) {
        end -= 2;
        memcpy(end, text_digit_pairs + 2 * (value % 100), 2);
        value /= 100;
    }
    if (count)
        end[-1] = (char)('0' + value % 10);
}

/* `precision` significant digits of `digits`, the first of them at decimal
 * exponent `exponent` (-4..precision-1), as %g writes them: no exponent,
 * trailing zeros and a bare point dropped.  The zeros are dropped from the
 * number before it is written (a GL float such as 0.7 has five), and the
 * text is built in a buffer and appended once. */
static void append_fixed(GString *out, gboolean negative, uint64_t digits, int exponent, int precision)
{
    int length = precision, whole = exponent + 1;   /* digits kept; digits before the point */
    while (length - 2 >= whole && length >= 2 && digits % 100 == 0) {
        digits /= 100;
        length -= 2;
    }
    if (length > whole && length > 0 && digits % 10 == 0) {
        digits /= 10;
        length--;
    }
    char text[48];
    size_t n = 0;
    if (negative)
        text[n++] = '-';
    if (exponent < 0) {
        text[n++] = '0';
        text[n++] = '.';
        for (int i = whole; i < 0; i++)
            text[n++] = '0';
        n += (size_t)length;
        write_digits(text + n, digits, length);
        text_append(out, text, n);
        return;
    }
    /* Written backwards: the fraction's digits, the point, the whole part. */
    int fraction = length - whole;
    n += (size_t)length + (fraction > 0);
    char *end = text + n;
    if (fraction > 0) {
        write_digits(end, digits % powers_of_ten[fraction], fraction);
        end -= fraction;
        *--end = '.';
        digits /= powers_of_ten[fraction];
    }
    write_digits(end, digits, whole);
    text_append(out, text, n);
}

static gboolean append_without_printf(GString *out, double value, int precision)
{
    if (precision < 1 || precision > 17 || !isfinite(value))
        return FALSE;
    double magnitude = fabs(value);
    if (magnitude == 0) {
        text_append_cstring(out, signbit(value) ? "-0" : "0");
        return TRUE;
    }
    if (magnitude < 1e-4 || magnitude >= (double)powers_of_ten[precision])
        return FALSE;   /* printed with an exponent */
    int binary_exponent;
    uint64_t mantissa = exact_parts(magnitude, &binary_exponent);
    int exponent = decimal_exponent(magnitude, precision);
    uint64_t digits;
    if (!scaled_digits(mantissa, binary_exponent, precision - 1 - exponent, &digits))
        return FALSE;
    if (digits == powers_of_ten[precision]) {   /* rounded up to the next power */
        digits /= 10;
        exponent++;
    }
    if (exponent >= precision || digits < powers_of_ten[precision - 1] || digits >= powers_of_ten[precision])
        return FALSE;
    append_fixed(out, signbit(value) != 0, digits, exponent, precision);
    return TRUE;
}

void text_general_number(GString *out, double value, int precision)
{
    if (append_without_printf(out, value, precision))
        return;
    char text[64];
    int length = snprintf(text, sizeof text, "%.*g", precision, value);
    if (length > 0)
        g_string_append_len(out, text, MIN(length, (int)sizeof text - 1));
}

/* round(|value| * 10^decimals), ties to even, as glibc's %f rounds. */
static gboolean append_fixed_without_printf(GString *out, double value, int decimals)
{
    if (decimals < 0 || decimals > 19 || !isfinite(value))
        return FALSE;
    int binary_exponent;
    uint64_t mantissa = exact_parts(fabs(value), &binary_exponent);
    uint64_t digits = 0;
    if (mantissa && !scaled_digits(mantissa, binary_exponent, decimals, &digits))
        return FALSE;
    char text[48];
    size_t at = sizeof text;
    for (int i = 0; i < decimals; i++) {
        text[--at] = (char)('0' + digits % 10);
        digits /= 10;
    }
    if (decimals > 0)
        text[--at] = '.';
    do {
        text[--at] = (char)('0' + digits % 10);
        digits /= 10;
    } while (digits);
    if (signbit(value))
        text[--at] = '-';
    text_append(out, text + at, sizeof text - at);
    return TRUE;
}

void text_fixed_number(GString *out, double value, int decimals)
{
    if (append_fixed_without_printf(out, value, decimals))
        return;
    char text[400];   /* %f of DBL_MAX has 309 digits before the point */
    int length = snprintf(text, sizeof text, "%.*f", decimals, value);
    if (length > 0)
        g_string_append_len(out, text, MIN(length, (int)sizeof text - 1));
}
