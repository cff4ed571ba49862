/* printf's "%.*g" without printf for the numbers traces are full of.
 * glibc prints every double through exact multi-precision arithmetic; that
 * was a seventh of apitrace's rendering profile (a GL trace is mostly
 * floats such as 0.2 or -0.6).  A number whose exact value, scaled to the
 * wanted digits, fits in 64 bits is rounded here with integers, exactly as
 * glibc rounds (to nearest, ties to even); every other goes to printf. */
#include <math.h>
#include <stdio.h>
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
 * when it does not fit in 64 bits. */
static gboolean scaled_digits(uint64_t mantissa, int binary_exponent, int scale, uint64_t *digits)
{
    uint64_t product;
    if (scale < 0 || scale > 19 || __builtin_mul_overflow(mantissa, powers_of_ten[scale], &product))
        return FALSE;
    if (binary_exponent >= 0) {
        if (binary_exponent >= 64 || product > (UINT64_MAX >> binary_exponent))
            return FALSE;
        *digits = product << binary_exponent;
        return TRUE;
    }
    int shift = -binary_exponent;
    if (shift >= 64)
        return FALSE;
    uint64_t quotient = product >> shift;
    uint64_t remainder = product & ((1ull << shift) - 1);
    uint64_t half = 1ull << (shift - 1);
    if (remainder > half || (remainder == half && (quotient & 1)))
        quotient++;
    *digits = quotient;
    return TRUE;
}

/* `precision` significant digits of `digits`, the first of them at decimal
 * exponent `exponent` (-4..precision-1), as %g writes them: no exponent,
 * trailing zeros and a bare point dropped. */
static void append_fixed(GString *out, uint64_t digits, int exponent, int precision)
{
    char text[24];
    for (int i = precision - 1; i >= 0; i--) {
        text[i] = (char)('0' + digits % 10);
        digits /= 10;
    }
    int length = precision;
    while (length > exponent + 1 && length > 0 && text[length - 1] == '0')
        length--;
    if (exponent < 0) {
        g_string_append(out, "0.");
        for (int i = exponent + 1; i < 0; i++)
            g_string_append_c(out, '0');
        g_string_append_len(out, text, length);
        return;
    }
    g_string_append_len(out, text, exponent + 1);
    if (length > exponent + 1) {
        g_string_append_c(out, '.');
        g_string_append_len(out, text + exponent + 1, length - exponent - 1);
    }
}

static gboolean append_without_printf(GString *out, double value, int precision)
{
    if (precision < 1 || precision > 17 || !isfinite(value))
        return FALSE;
    double magnitude = fabs(value);
    if (magnitude == 0) {
        g_string_append(out, signbit(value) ? "-0" : "0");
        return TRUE;
    }
    if (magnitude < 1e-4 || magnitude >= (double)powers_of_ten[precision])
        return FALSE;   /* printed with an exponent */
    int binary_exponent;
    double fraction = frexp(magnitude, &binary_exponent);
    uint64_t mantissa = (uint64_t)ldexp(fraction, 53);   /* magnitude = mantissa * 2^(e-53), exactly */
    int zeros = __builtin_ctzll(mantissa);
    mantissa >>= zeros;
    binary_exponent += zeros - 53;
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
    if (signbit(value))
        g_string_append_c(out, '-');
    append_fixed(out, digits, exponent, precision);
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
