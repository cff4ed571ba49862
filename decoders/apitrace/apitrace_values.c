/* Values: parsed straight from the stream into apitrace dump text or JSON
 * (nothing is built in memory, so a 64 KiB blob costs no allocation). */
#include <inttypes.h>
#include <string.h>
#include "apitrace.h"
#include "text.h"
#include "tracefs_limits.h"

enum {
    TYPE_NULL = 0x00, TYPE_FALSE, TYPE_TRUE, TYPE_SINT, TYPE_UINT, TYPE_FLOAT, TYPE_DOUBLE,
    TYPE_STRING, TYPE_BLOB, TYPE_ENUM, TYPE_BITMASK, TYPE_ARRAY, TYPE_STRUCT, TYPE_OPAQUE,
    TYPE_REPR, TYPE_WSTRING,
};

static gboolean fail(struct at_value_ctx *ctx, const char *why)
{
    if (!ctx->why)
        ctx->why = why;
    return FALSE;
}

/* A top-level integer's value, for glGetError's return. */
static void note_int(struct at_value_ctx *ctx, gboolean top, int64_t value)
{
    if (!top || !ctx->last_int)
        return;
    *ctx->last_int = value;
    *ctx->has_int = TRUE;
}

/* One character as apitrace's dumper writes it inside quotes.  `c` is the
 * character widened as the C++ code widens it (chars sign-extend). */
static void dump_char(GString *out, uint32_t c)
{
    if (c == '"')
        g_string_append(out, "\\\"");
    else if (c == '\\')
        g_string_append(out, "\\\\");
    else if ((c >= 0x20 && c <= 0x7e) || c == '\t' || c == '\n')
        g_string_append_c(out, (char)c);
    else if (c == '\r')
        return;
    else {
        /* apitrace prints the middle octal digit twice (its own bug) and
         * drops zero digits: copied so the text stays identical. */
        unsigned o0 = c & 7, o1 = (c >> 3) & 7;
        g_string_append_c(out, '\\');
        if (o1) {
            g_string_append_c(out, (char)('0' + o1));
            g_string_append_c(out, (char)('0' + o1));
        }
        g_string_append_c(out, (char)('0' + o0));
    }
}

void at_dump_string(GString *out, const char *s, size_t len)
{
    g_string_append_c(out, '"');
    for (size_t i = 0; i < len && s[i]; i++)
        dump_char(out, (uint32_t)(int32_t)(signed char)s[i]);
    g_string_append_c(out, '"');
}

static gboolean value_string(struct at_value_ctx *ctx, struct at_reader *reader, GString *out)
{
    uint64_t length;
    if (!at_uint(reader, &length) || length > at_bytes_left(reader))
        return fail(ctx, "string longer than the stream");
    if (ctx->style == AT_STYLE_SKIP)
        return at_skip(reader, length);
    char *s = g_try_malloc(length + 1);
    if (!s)
        return fail(ctx, "string too large");
    gboolean ok = at_read(reader, s, length);
    s[length] = '\0';
    if (ok && ctx->style == AT_STYLE_DUMP)
        at_dump_string(out, s, length);
    else if (ok)
        text_json_cstring(out, s);    /* a C string for apitrace: ends at NUL */
    g_free(s);
    return ok ? TRUE : fail(ctx, "truncated string");
}

static gboolean value_wstring(struct at_value_ctx *ctx, struct at_reader *reader, GString *out)
{
    uint64_t length, c = 0;
    if (!at_uint(reader, &length) || length > at_bytes_left(reader))
        return fail(ctx, "wide string longer than the stream");
    GString *text = ctx->style == AT_STYLE_SKIP ? NULL : g_string_new(NULL);
    gboolean ended = FALSE, ok = TRUE;
    if (text && ctx->style == AT_STYLE_DUMP)
        g_string_append(text, "L\"");
    for (uint64_t i = 0; i < length && ok; i++) {
        ok = at_uint(reader, &c);
        uint32_t wc = (uint32_t)c;     /* wchar_t is 32 bits in apitrace on Linux */
        ended = ended || wc == 0;      /* the text ends at a NUL; the characters after it are read */
        if (!ok || !text || ended)
            continue;
        if (ctx->style == AT_STYLE_DUMP)
            dump_char(text, wc);
        else if (g_unichar_validate(wc))
            g_string_append_unichar(text, wc);
        else
            g_string_append_unichar(text, 0xfffd);
    }
    if (text && ok) {
        if (ctx->style == AT_STYLE_DUMP) {
            g_string_append_c(text, '"');
            g_string_append_len(out, text->str, text->len);
        } else {
            text_json_string(out, text->str, text->len);
        }
    }
    if (text)
        g_string_free(text, TRUE);
    return ok ? TRUE : fail(ctx, "truncated wide string");
}

static gboolean value_enum(struct at_value_ctx *ctx, struct at_reader *reader, GString *out, gboolean top)
{
    struct at_named_values *sig = at_named_values_sig(ctx->state, reader, ctx->define, TRUE);
    if (!sig)
        return fail(ctx, "bad or undefined enum signature");
    int64_t value;
    if (ctx->state->version >= 3) {
        if (!at_sint(reader, &value))
            return fail(ctx, "bad enum value");
    } else {
        value = sig->count ? (int64_t)sig->values[0].value : 0;
    }
    note_int(ctx, top, value);
    if (ctx->style == AT_STYLE_SKIP)
        return TRUE;
    const char *name = at_enum_name(sig, value);
    if (ctx->style == AT_STYLE_DUMP) {
        if (name)
            g_string_append(out, name);
        else
            text_append_i64(out, value);
        return TRUE;
    }
    g_string_append(out, "{\"enum\": ");
    if (name)
        text_json_cstring(out, name);
    else
        g_string_append(out, "null");
    g_string_append(out, ", \"value\": ");
    text_append_i64(out, value);
    g_string_append_c(out, '}');
    return TRUE;
}

/* apitrace's bitmask text: the flags that match, in signature order, each
 * clearing its bits from the value, joined by " | "; then what is left in
 * hex (or 0x0 when nothing matched).  Zero stops the search before a flag
 * is tried, so a zero-valued flag names only a zero value, and only as the
 * signature's first flag. */
static void bitmask_text(const struct at_named_values *sig, uint64_t value, GString *out)
{
    if (value == 0) {
        if (sig->count && sig->values[0].value == 0)
            g_string_append(out, sig->values[0].name);
        else
            g_string_append(out, "0x0");
        return;
    }
    gboolean first = TRUE;
    for (uint32_t i = 0; i < sig->matchable_count && value; i++) {
        uint64_t flag = sig->matchable_values[i];
        if ((value & flag) != flag)
            continue;
        if (!first)
            g_string_append(out, " | ");
        g_string_append(out, sig->values[sig->matchable_positions[i]].name);
        value &= ~flag;
        first = FALSE;
    }
    if (value || first) {
        if (!first)
            g_string_append(out, " | ");
        g_string_append(out, "0x");
        text_append_hex(out, value);
    }
}

static gboolean value_bitmask(struct at_value_ctx *ctx, struct at_reader *reader, GString *out)
{
    struct at_named_values *sig = at_named_values_sig(ctx->state, reader, ctx->define, FALSE);
    uint64_t value;
    if (!sig)
        return fail(ctx, "bad or undefined bitmask signature");
    if (!at_uint(reader, &value))
        return fail(ctx, "bad bitmask value");
    if (ctx->style == AT_STYLE_DUMP) {
        bitmask_text(sig, value, out);
    } else if (ctx->style == AT_STYLE_JSON) {
        GString *text = g_string_new(NULL);
        bitmask_text(sig, value, text);
        g_string_append(out, "{\"bitmask\": ");
        text_json_string(out, text->str, text->len);
        g_string_append(out, ", \"value\": ");
        text_append_u64(out, value);
        g_string_append_c(out, '}');
        g_string_free(text, TRUE);
    }
    return TRUE;
}

static gboolean value_array(struct at_value_ctx *ctx, struct at_reader *reader, GString *out, unsigned depth)
{
    uint64_t count;
    if (!at_uint(reader, &count) || count > at_bytes_left(reader))
        return fail(ctx, "array count larger than the bytes left");
    gboolean dump = ctx->style == AT_STYLE_DUMP;
    if (dump && count == 1)
        g_string_append_c(out, '&');
    else if (ctx->style != AT_STYLE_SKIP)
        g_string_append_c(out, dump ? '{' : '[');
    for (uint64_t i = 0; i < count; i++) {
        if (i > 0 && ctx->style != AT_STYLE_SKIP)
            g_string_append(out, ", ");
        if (!at_value(ctx, reader, out, depth + 1))
            return FALSE;
    }
    if (ctx->style != AT_STYLE_SKIP && !(dump && count == 1))
        g_string_append_c(out, dump ? '}' : ']');
    return TRUE;
}

/* Parses a value without output (one the dump does not show). */
static gboolean skip_value(struct at_value_ctx *ctx, struct at_reader *reader, unsigned depth)
{
    enum at_value_style style = ctx->style;
    ctx->style = AT_STYLE_SKIP;
    gboolean ok = at_value(ctx, reader, NULL, depth);
    ctx->style = style;
    return ok;
}

/* Struct members in dump text; an anonymous struct member is flattened
 * into its parent and any other anonymous member is not shown. */
static gboolean dump_members(struct at_value_ctx *ctx, struct at_reader *reader, const struct at_struct *sig,
                             GString *out, unsigned depth, const char **sep)
{
    for (uint32_t i = 0; i < sig->count; i++) {
        const char *name = sig->member_names[i];
        if (name[0]) {
            g_string_append(out, *sep);
            g_string_append(out, name);
            g_string_append(out, " = ");
            if (!at_value(ctx, reader, out, depth + 1))
                return FALSE;
            *sep = ", ";
            continue;
        }
        if (depth + 1 >= LIMIT_APITRACE_VALUE_DEPTH)
            return fail(ctx, "values nested too deeply");
        int tag = at_getc(reader);
        if (tag == TYPE_STRUCT) {
            const struct at_struct *inner = at_struct_sig(ctx->state, reader, ctx->define);
            if (!inner)
                return fail(ctx, "bad or undefined struct signature");
            if (!dump_members(ctx, reader, inner, out, depth + 1, sep))
                return FALSE;
            continue;
        }
        if (tag < 0)
            return fail(ctx, "truncated value");
        at_reader_seek(reader, at_reader_offset(reader) - 1);
        if (!skip_value(ctx, reader, depth + 1))
            return FALSE;
    }
    return TRUE;
}

static gboolean value_struct(struct at_value_ctx *ctx, struct at_reader *reader, GString *out, unsigned depth)
{
    const struct at_struct *sig = at_struct_sig(ctx->state, reader, ctx->define);
    if (!sig)
        return fail(ctx, "bad or undefined struct signature");
    if (ctx->style == AT_STYLE_DUMP) {
        const char *sep = "";
        g_string_append_c(out, '{');
        if (!dump_members(ctx, reader, sig, out, depth, &sep))
            return FALSE;
        g_string_append_c(out, '}');
        return TRUE;
    }
    if (ctx->style == AT_STYLE_JSON) {
        g_string_append(out, "{\"struct\": ");
        text_json_cstring(out, sig->name);
        g_string_append(out, ", \"members\": {");
    }
    for (uint32_t i = 0; i < sig->count; i++) {
        if (ctx->style == AT_STYLE_JSON) {
            if (i > 0)
                g_string_append(out, ", ");
            if (sig->member_names[i][0])
                text_json_cstring(out, sig->member_names[i]);
            else
                g_string_append_printf(out, "\"#%u\"", i);
            g_string_append(out, ": ");
        }
        if (!at_value(ctx, reader, out, depth + 1))
            return FALSE;
    }
    if (ctx->style == AT_STYLE_JSON)
        g_string_append(out, "}}");
    return TRUE;
}

static gboolean value_blob(struct at_value_ctx *ctx, struct at_reader *reader, GString *out, unsigned depth)
{
    uint64_t size;
    if (!at_uint(reader, &size) || size > at_bytes_left(reader))
        return fail(ctx, "blob larger than the bytes left");
    if (ctx->style == AT_STYLE_DUMP) {
        g_string_append(out, "blob(");
        text_append_u64(out, size);
        g_string_append_c(out, ')');
    } else if (ctx->style == AT_STYLE_JSON && depth == 0) {
        g_string_append_printf(out, "{\"blob\": %" PRIu64 ", \"file\": \"blobs/%" PRIu64, size, ctx->call);
        if (ctx->arg >= 0)
            g_string_append_printf(out, ".%" PRId64 "\"}", ctx->arg);
        else
            g_string_append(out, ".ret\"}");
    } else if (ctx->style == AT_STYLE_JSON)
        g_string_append_printf(out, "{\"blob\": %" PRIu64 "}", size);
    return at_skip(reader, size) ? TRUE : fail(ctx, "truncated blob");
}

static gboolean value_number(struct at_value_ctx *ctx, struct at_reader *reader, GString *out, int tag, gboolean top)
{
    uint64_t u;
    if (!at_uint(reader, &u))
        return fail(ctx, "bad integer");
    int64_t s = tag == TYPE_SINT ? (int64_t)(0 - u) : (int64_t)u;
    note_int(ctx, top, s);
    if (ctx->style == AT_STYLE_SKIP)
        return TRUE;
    if (tag == TYPE_SINT)
        text_append_i64(out, s);
    else if (tag == TYPE_UINT)
        text_append_u64(out, u);
    else if (ctx->style == AT_STYLE_DUMP) {
        g_string_append(out, "0x");
        text_append_hex(out, u);
    } else {
        g_string_append(out, "{\"pointer\": \"0x");
        text_append_hex(out, u);
        g_string_append(out, "\"}");
    }
    return TRUE;
}

static gboolean value_real(struct at_value_ctx *ctx, struct at_reader *reader, GString *out, int tag)
{
    uint8_t bytes[8];
    size_t size = tag == TYPE_FLOAT ? 4 : 8;
    if (!at_read(reader, bytes, size))
        return fail(ctx, "truncated float");
    if (ctx->style == AT_STYLE_SKIP)
        return TRUE;
    double value;
    if (tag == TYPE_FLOAT) {
        uint32_t bits = load_le32(bytes);
        float f;
        memcpy(&f, &bits, 4);
        value = f;
    } else {
        uint64_t bits = load_le64(bytes);
        memcpy(&value, &bits, 8);
    }
    if (ctx->style == AT_STYLE_DUMP)
        text_general_number(out, value, tag == TYPE_FLOAT ? 7 : 16);   /* as C++ streams print floats and doubles */
    else
        text_json_double(out, value);
    return TRUE;
}

gboolean at_value(struct at_value_ctx *ctx, struct at_reader *reader, GString *out, unsigned depth)
{
    if (depth >= LIMIT_APITRACE_VALUE_DEPTH)
        return fail(ctx, "values nested too deeply");
    int tag = at_getc(reader);
    gboolean top = depth == 0, json = ctx->style == AT_STYLE_JSON, skip = ctx->style == AT_STYLE_SKIP;
    switch (tag) {
    case TYPE_NULL:
        if (!skip)
            g_string_append(out, json ? "null" : "NULL");
        return TRUE;
    case TYPE_FALSE:
    case TYPE_TRUE:
        note_int(ctx, top, tag == TYPE_TRUE);
        if (!skip)
            g_string_append(out, tag == TYPE_TRUE ? "true" : "false");
        return TRUE;
    case TYPE_SINT:
    case TYPE_UINT:
    case TYPE_OPAQUE:
        return value_number(ctx, reader, out, tag, top);
    case TYPE_FLOAT:
    case TYPE_DOUBLE:
        return value_real(ctx, reader, out, tag);
    case TYPE_STRING: return value_string(ctx, reader, out);
    case TYPE_BLOB: return value_blob(ctx, reader, out, depth);
    case TYPE_ENUM: return value_enum(ctx, reader, out, top);
    case TYPE_BITMASK: return value_bitmask(ctx, reader, out);
    case TYPE_ARRAY: return value_array(ctx, reader, out, depth);
    case TYPE_STRUCT: return value_struct(ctx, reader, out, depth);
    case TYPE_REPR:   /* the dump shows the human value; the machine value is parsed unseen */
        return at_value(ctx, reader, out, depth + 1) && skip_value(ctx, reader, depth + 1);
    case TYPE_WSTRING: return value_wstring(ctx, reader, out);
    case -1: return fail(ctx, "truncated value");
    default: return fail(ctx, "unknown value type");
    }
}
