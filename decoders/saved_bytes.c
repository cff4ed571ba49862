/* The persistent index's byte layer for formats: little more than memcpy,
 * with every length checked against what is left. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "huge_pages.h"
#include "saved_bytes.h"

/* Copies out of a mapped index go a piece at a time, releasing each piece's
 * pages once copied. */
#define COPY_PIECE ((size_t)8 << 20)

#define NULL_STRING UINT64_MAX

struct saved_writer *saved_writer_new(void)
{
    struct saved_writer *writer = g_new0(struct saved_writer, 1);
    writer->bytes = g_byte_array_new();
    writer->blocks = g_array_new(FALSE, FALSE, sizeof(struct saved_block));
    return writer;
}

void saved_writer_free(struct saved_writer *writer)
{
    if (!writer)
        return;
    g_byte_array_free(writer->bytes, TRUE);
    g_array_free(writer->blocks, TRUE);
    g_free(writer);
}

int saved_writer_foreach(const struct saved_writer *writer,
                         int (*piece)(const uint8_t *data, size_t size, void *context), void *context)
{
    size_t done = 0;   /* of `bytes` */
    for (guint i = 0; i < writer->blocks->len; i++) {
        const struct saved_block *block = &g_array_index(writer->blocks, struct saved_block, i);
        int rc = block->bytes_before > done ? piece(writer->bytes->data + done, block->bytes_before - done, context) : 0;
        if (rc == 0)
            rc = piece(block->data, block->size, context);
        if (rc != 0)
            return rc;
        done = block->bytes_before;
    }
    return writer->bytes->len > done ? piece(writer->bytes->data + done, writer->bytes->len - done, context) : 0;
}

static int append_piece(const uint8_t *data, size_t size, void *context)
{
    g_byte_array_append(context, data, (guint)size);
    return 0;
}

GByteArray *saved_writer_join(const struct saved_writer *writer)
{
    GByteArray *joined = g_byte_array_sized_new((guint)writer->size);
    saved_writer_foreach(writer, append_piece, joined);
    return joined;
}

GByteArray *saved_writer_finish(struct saved_writer *writer)
{
    GByteArray *whole;
    if (writer->blocks->len) {
        whole = saved_writer_join(writer);
    } else {
        whole = writer->bytes;
        writer->bytes = g_byte_array_new();
    }
    saved_writer_free(writer);
    return whole;
}

void saved_put(struct saved_writer *out, const void *data, size_t size)
{
    if (size >= SAVED_BLOCK_BYTES) {
        struct saved_block block = { out->bytes->len, data, size };
        g_array_append_val(out->blocks, block);
    } else if (size) {
        g_byte_array_append(out->bytes, data, (guint)size);
    }
    out->size += size;
}

void saved_put_u64(struct saved_writer *out, uint64_t value)
{
    saved_put(out, &value, sizeof value);
}

void saved_put_bytes(struct saved_writer *out, const void *data, size_t size)
{
    saved_put_u64(out, size);
    saved_put(out, data, size);
}

void saved_put_string(struct saved_writer *out, const char *text)
{
    if (!text) {
        saved_put_u64(out, NULL_STRING);
        return;
    }
    saved_put_bytes(out, text, strlen(text));
}

void saved_put_gstring(struct saved_writer *out, const GString *text)
{
    if (!text) {
        saved_put_u64(out, NULL_STRING);
        return;
    }
    saved_put_bytes(out, text->str, text->len);
}

void saved_put_array(struct saved_writer *out, const GArray *array)
{
    guint element = g_array_get_element_size((GArray *)array);
    saved_put_u64(out, array->len);
    saved_put(out, array->data, (size_t)array->len * element);
}

void saved_put_u32_array(struct saved_writer *out, const GArray *values)
{
    saved_put_u64(out, values->len);
    for (guint i = 0; i < values->len; i++)
        saved_put_u64(out, g_array_index(values, uint32_t, i));
}

void saved_reader_init(struct saved_reader *reader, const uint8_t *data, size_t size)
{
    *reader = (struct saved_reader){ data, size, 0, FALSE, FALSE };
}

void saved_reader_init_mapped(struct saved_reader *reader, const uint8_t *data, size_t size)
{
    *reader = (struct saved_reader){ data, size, 0, FALSE, TRUE };
}

void saved_release_mapped(const void *start, size_t length)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)start + page - 1) & ~(page - 1);
    uintptr_t to = ((uintptr_t)start + length) & ~(page - 1);
    if (to > from)
        madvise((void *)from, to - from, MADV_DONTNEED);
}

/* Without the release, a remount of a big XRay log held its tables twice:
 * the copy and the mapped pages it came from. */
static void copy_releasing(void *out, const uint8_t *from, size_t size)
{
    huge_pages_advise(out, size);
    for (size_t at = 0; at < size; at += COPY_PIECE) {
        size_t piece = size - at < COPY_PIECE ? size - at : COPY_PIECE;
        memcpy((uint8_t *)out + at, from + at, piece);
        saved_release_mapped(from + at, piece);
    }
}

gboolean saved_take(struct saved_reader *reader, void *out, size_t size)
{
    if (reader->bad || size > reader->size - reader->at) {
        reader->bad = TRUE;
        memset(out, 0, size);
        return FALSE;
    }
    if (reader->mapped && size >= COPY_PIECE)
        copy_releasing(out, reader->data + reader->at, size);
    else if (size)
        memcpy(out, reader->data + reader->at, size);
    reader->at += size;
    return TRUE;
}

uint64_t saved_get_u64(struct saved_reader *reader)
{
    uint64_t value;
    saved_take(reader, &value, sizeof value);
    return value;
}

uint64_t saved_get_below(struct saved_reader *reader, uint64_t bound)
{
    uint64_t value = saved_get_u64(reader);
    if (value >= bound)
        reader->bad = TRUE;
    return reader->bad ? 0 : value;
}

uint64_t saved_get_count(struct saved_reader *reader, size_t item_bytes, uint64_t max_count)
{
    uint64_t count = saved_get_u64(reader);
    if (count > max_count || (item_bytes && count > (reader->size - reader->at) / item_bytes))
        reader->bad = TRUE;
    return reader->bad ? 0 : count;
}

/* The bytes of a saved string, or NULL (NULL saved, or bad). */
static const char *get_bytes(struct saved_reader *reader, size_t max_length, size_t *length)
{
    uint64_t saved = saved_get_u64(reader);
    *length = 0;
    if (reader->bad || saved == NULL_STRING)
        return NULL;
    if (saved > max_length || saved > reader->size - reader->at) {
        reader->bad = TRUE;
        return NULL;
    }
    const char *bytes = (const char *)reader->data + reader->at;
    reader->at += (size_t)saved;
    *length = (size_t)saved;
    return bytes;
}

const char *saved_get_bytes(struct saved_reader *reader, size_t max_length, size_t *length)
{
    const char *bytes = get_bytes(reader, max_length, length);
    if (!bytes)
        reader->bad = TRUE;   /* only strings may be saved as NULL */
    return bytes;
}

char *saved_get_string(struct saved_reader *reader, size_t max_length)
{
    size_t length;
    const char *bytes = get_bytes(reader, max_length, &length);
    if (!bytes)
        return NULL;
    if (memchr(bytes, 0, length)) {
        reader->bad = TRUE;
        return NULL;
    }
    return g_strndup(bytes, length);
}

char *saved_get_name(struct saved_reader *reader, size_t max_length, size_t *length)
{
    *length = 0;
    size_t kept;
    const char *bytes = saved_get_bytes(reader, max_length, &kept);
    if (!bytes)
        return NULL;
    char *name = g_malloc(kept + 1);
    memcpy(name, bytes, kept);
    name[kept] = '\0';
    *length = kept;
    return name;
}

GString *saved_get_gstring(struct saved_reader *reader, size_t max_length)
{
    size_t length;
    const char *bytes = get_bytes(reader, max_length, &length);
    return bytes ? g_string_new_len(bytes, (gssize)length) : NULL;
}

gboolean saved_get_array(struct saved_reader *reader, GArray *array, uint64_t max_count)
{
    guint element = g_array_get_element_size(array);
    uint64_t count = saved_get_u64(reader);
    if (reader->bad || count > max_count || count > (reader->size - reader->at) / element) {
        reader->bad = TRUE;
        return FALSE;
    }
    g_array_set_size(array, (guint)count);
    return saved_take(reader, array->data, (size_t)count * element);
}

gboolean saved_get_u32_array(struct saved_reader *reader, GArray *values, uint64_t max_count)
{
    g_assert(g_array_get_element_size(values) == sizeof(uint32_t));
    uint64_t count = saved_get_count(reader, sizeof(uint64_t), max_count);
    for (uint64_t i = 0; i < count && !reader->bad; i++) {
        uint32_t value = (uint32_t)saved_get_below(reader, (uint64_t)UINT32_MAX + 1);
        g_array_append_val(values, value);
    }
    return !reader->bad;
}

gboolean saved_reader_done(const struct saved_reader *reader)
{
    return !reader->bad && reader->at == reader->size;
}
