/* Hash functions for keys a trace chooses (ids, names, koids): keyed with
 * a secret drawn once per process, so that a crafted trace cannot pick
 * keys that all land in one bucket of a GHashTable (glib's own hashes are
 * unkeyed: g_int64_hash keeps the low 32 bits, g_str_hash and g_bytes_hash
 * are djb2, so "Ab" and "BA" collide, and a table of such keys turns every
 * insert into a walk of all of them).  A table hashed this way must not
 * decide an output's order: iterate it only to save it or to sort. */
#ifndef TRACEFS_KEYED_HASH_H
#define TRACEFS_KEYED_HASH_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/* SipHash-1-3 of the bytes under the process's key. */
uint64_t keyed_hash_bytes(const void *data, size_t len);
/* A 64-bit value mixed with the process's key (cheaper than SipHash, for
 * hot integer tables). */
guint keyed_hash_u64(uint64_t value);
uint64_t keyed_mix64(uint64_t value);

/* GHashFunc's, with g_int64_equal, g_str_equal and g_bytes_equal. */
guint keyed_hash_int64(gconstpointer key);
guint keyed_hash_string(gconstpointer key);
guint keyed_hash_gbytes(gconstpointer key);

#endif
