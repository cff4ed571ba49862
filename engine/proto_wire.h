/* Protocol Buffers wire encoding, by hand: varints, fixed64, doubles,
 * length-delimited fields and nested messages.  Enough to write Perfetto
 * traces without libprotobuf (the encoding is the public spec at
 * protobuf.dev/programming-guides/encoding). */
#ifndef TRACEFS_PROTO_WIRE_H
#define TRACEFS_PROTO_WIRE_H

#include <glib.h>
#include <stdint.h>
#include <string.h>

enum proto_wire_type {
    PROTO_VARINT = 0,
    PROTO_FIXED64 = 1,
    PROTO_LENGTH_DELIMITED = 2,
};

/* Bytes reserved for a nested message's length while its content is
 * written: a varint of 5 bytes holds up to 2^35 - 1. */
#define PROTO_LENGTH_RESERVE 5

static inline size_t proto_varint_encode(uint8_t *bytes, uint64_t value)
{
    size_t n = 0;
    while (value >= 0x80) {
        bytes[n++] = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    bytes[n++] = (uint8_t)value;
    return n;
}

static inline void proto_varint(GString *out, uint64_t value)
{
    uint8_t bytes[10];
    g_string_append_len(out, (const char *)bytes, (gssize)proto_varint_encode(bytes, value));
}

static inline void proto_tag(GString *out, uint32_t field, enum proto_wire_type type)
{
    proto_varint(out, ((uint64_t)field << 3) | (uint64_t)type);
}

/* uint32/uint64/bool/enum fields; int32 and int64 take the two's
 * complement (a negative value is 10 bytes, as the spec says, also for
 * int32). */
static inline void proto_uint(GString *out, uint32_t field, uint64_t value)
{
    proto_tag(out, field, PROTO_VARINT);
    proto_varint(out, value);
}

static inline void proto_int(GString *out, uint32_t field, int64_t value)
{
    proto_uint(out, field, (uint64_t)value);
}

/* fixed64 and double: 8 bytes, little-endian. */
static inline void proto_fixed64(GString *out, uint32_t field, uint64_t value)
{
    uint8_t bytes[8];
    for (int i = 0; i < 8; i++)
        bytes[i] = (uint8_t)(value >> (8 * i));
    proto_tag(out, field, PROTO_FIXED64);
    g_string_append_len(out, (const char *)bytes, 8);
}

static inline void proto_double(GString *out, uint32_t field, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    proto_fixed64(out, field, bits);
}

static inline void proto_bytes(GString *out, uint32_t field, const void *data, size_t len)
{
    proto_tag(out, field, PROTO_LENGTH_DELIMITED);
    proto_varint(out, len);
    if (len)
        g_string_append_len(out, (const char *)data, (gssize)len);
}

/* A nested message: proto_open writes the tag and reserves room for the
 * length; proto_close writes the length in as few bytes as it needs and
 * moves the content down to it (so the output is the canonical encoding).
 * Returns / takes the position of the reserved bytes. */
static inline size_t proto_open(GString *out, uint32_t field)
{
    proto_tag(out, field, PROTO_LENGTH_DELIMITED);
    size_t at = out->len;
    g_string_set_size(out, at + PROTO_LENGTH_RESERVE);
    return at;
}

static inline void proto_close(GString *out, size_t at)
{
    size_t content = at + PROTO_LENGTH_RESERVE;
    size_t len = out->len - content;
    uint8_t bytes[10];
    size_t n = proto_varint_encode(bytes, len);
    g_assert(n <= PROTO_LENGTH_RESERVE);   /* 32 GiB: no record renders that much */
    memcpy(out->str + at, bytes, n);
    memmove(out->str + at + n, out->str + content, len);
    g_string_truncate(out, at + n + len);
}

#endif
