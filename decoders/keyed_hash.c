/* SipHash-1-3 (Aumasson and Bernstein) under a key drawn once per process,
 * and a keyed 64-bit mix for integer keys. */
#include <string.h>

#include "keyed_hash.h"

static uint64_t key[2];
static gsize key_drawn;

static const uint64_t *process_key(void)
{
    if (g_once_init_enter(&key_drawn)) {
        key[0] = (uint64_t)g_random_int() << 32 | g_random_int();
        key[1] = (uint64_t)g_random_int() << 32 | g_random_int();
        g_once_init_leave(&key_drawn, 1);
    }
    return key;
}

static inline uint64_t rotate(uint64_t x, unsigned bits)
{
    return x << bits | x >> (64 - bits);
}

static inline void sip_round(uint64_t v[4])
{
    v[0] += v[1]; v[1] = rotate(v[1], 13); v[1] ^= v[0]; v[0] = rotate(v[0], 32);
    v[2] += v[3]; v[3] = rotate(v[3], 16); v[3] ^= v[2];
    v[0] += v[3]; v[3] = rotate(v[3], 21); v[3] ^= v[0];
    v[2] += v[1]; v[1] = rotate(v[1], 17); v[1] ^= v[2]; v[2] = rotate(v[2], 32);
}

uint64_t keyed_hash_bytes(const void *data, size_t len)
{
    const uint64_t *k = process_key();
    uint64_t v[4] = { k[0] ^ 0x736f6d6570736575ull, k[1] ^ 0x646f72616e646f6dull, k[0] ^ 0x6c7967656e657261ull,
                      k[1] ^ 0x7465646279746573ull };
    const uint8_t *in = data;
    size_t whole = len - len % 8;
    for (size_t at = 0; at < whole; at += 8) {
        uint64_t word;
        memcpy(&word, in + at, 8);
        v[3] ^= word;
        sip_round(v);
        v[0] ^= word;
    }
    uint64_t last = (uint64_t)len << 56;
    for (size_t i = 0; i < len % 8; i++)
        last |= (uint64_t)in[whole + i] << (8 * i);
    v[3] ^= last;
    sip_round(v);
    v[0] ^= last;
    v[2] ^= 0xff;
    sip_round(v);
    sip_round(v);
    sip_round(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* The key enters before the first multiplication, so keys that differ
 * only in bits glib's hash drops (k << 32) spread like any others. */
uint64_t keyed_mix64(uint64_t value)
{
    const uint64_t *k = process_key();
    uint64_t x = (value ^ k[0]) * 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x = (x ^ k[1]) * 0xc4ceb9fe1a85ec53ull;
    return x ^ x >> 33;
}

guint keyed_hash_u64(uint64_t value)
{
    return (guint)keyed_mix64(value);
}

guint keyed_hash_int64(gconstpointer key_pointer)
{
    return keyed_hash_u64(*(const uint64_t *)key_pointer);
}

guint keyed_hash_string(gconstpointer key_pointer)
{
    return (guint)keyed_hash_bytes(key_pointer, strlen(key_pointer));
}

guint keyed_hash_gbytes(gconstpointer key_pointer)
{
    gsize len;
    const void *data = g_bytes_get_data((GBytes *)key_pointer, &len);
    return (guint)keyed_hash_bytes(data, len);
}
