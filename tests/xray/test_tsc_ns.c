/* xray_tsc_ns: TSC ticks to ns equal the 128-bit product over the
 * frequency (mod 2^64, as the ts of every event and call), for frequencies
 * of real machines and the edges, and TSCs from 0 to the top of 64 bits. */
#include <string.h>
#include <glib.h>
#include "xray_format.h"

static uint64_t expected_ns(uint64_t tsc, uint64_t frequency)
{
    return frequency ? (uint64_t)(((unsigned __int128)tsc * 1000000000u) / frequency) : tsc;
}

static void check(struct xray_state *state, uint64_t tsc)
{
    uint64_t frequency = state->header.cycle_frequency;
    uint64_t ns = xray_tsc_ns(state, tsc);
    if (ns != expected_ns(tsc, frequency))
        g_error("tsc %" G_GUINT64_FORMAT " at %" G_GUINT64_FORMAT " Hz: %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT,
                tsc, frequency, ns, expected_ns(tsc, frequency));
}

static void test_equals_wide_division(void)
{
    static const uint64_t frequencies[] = { 0, 1, 3, 999999999, 1000000000, 1000000001, 2400000000u,
                                            2904000000u, 3187200000u, 18446744072u, 18446744073u,
                                            UINT64_MAX / 1000000000u + 1, UINT64_MAX / 3, UINT64_MAX };
    static const uint64_t edges[] = { 0, 1, 999999999, 1000000000, UINT32_MAX, (uint64_t)1 << 53,
                                      UINT64_MAX / 1000000000u, UINT64_MAX - 1, UINT64_MAX };
    struct xray_state *state = g_new0(struct xray_state, 1);
    GRand *rand = g_rand_new_with_seed(20261130);
    for (size_t f = 0; f < G_N_ELEMENTS(frequencies); f++) {
        state->header.cycle_frequency = frequencies[f];
        for (size_t e = 0; e < G_N_ELEMENTS(edges); e++) {
            check(state, edges[e]);
            if (frequencies[f] && edges[e] >= frequencies[f]) {
                check(state, edges[e] - edges[e] % frequencies[f]);         /* whole periods */
                check(state, edges[e] - edges[e] % frequencies[f] - 1);     /* the rest at its largest */
            }
        }
        for (int i = 0; i < 100000; i++) {
            uint64_t tsc = ((uint64_t)g_rand_int(rand) << 32) | g_rand_int(rand);
            check(state, tsc >> g_rand_int_range(rand, 0, 64));
        }
    }
    g_rand_free(rand);
    g_free(state);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/xray/tsc-ns-equals-wide-division", test_equals_wide_division);
    return g_test_run();
}
