/* Function names from the instrumented binary: the xray_instr_map section
 * gives each function id its address (ids are numbered as llvm's
 * InstrumentationMap does: a new id whenever the sled's function changes),
 * and the ELF symbol table gives the address its name, demangled. */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>
#include "input_file.h"
#include "sorted_search.h"
#include "tracefs_limits.h"
#include "xray_format.h"

struct xray_symbols {
    GArray *addresses;        /* uint64_t, index = func id - 1 */
    GPtrArray *names;         /* char * or NULL, index = func id - 1 */
};

struct elf_symbol {
    uint64_t address;
    uint64_t size;
    const char *name;
    int global;
};

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

/* The C++ runtime's demangler, found at run time so that tracefs stays a
 * C program with no link-time C++ dependency; without it names stay mangled. */
static cxa_demangle_fn find_demangler(void)
{
    static gsize once;
    static cxa_demangle_fn fn;
    if (g_once_init_enter(&once)) {
        void *library = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (library)
            fn = (cxa_demangle_fn)dlsym(library, "__cxa_demangle");
        g_once_init_leave(&once, 1);
    }
    return fn;
}

/* Demangles with the C++ runtime's __cxa_demangle when available. */
static char *xray_demangle(const char *name)
{
    cxa_demangle_fn demangle = strncmp(name, "_Z", 2) == 0 ? find_demangler() : NULL;
    int status = -1;
    char *plain = demangle ? demangle(name, NULL, NULL, &status) : NULL;
    char *copy = g_strdup(status == 0 && plain ? plain : name);
    free(plain);   /* the runtime's malloc, not glib's */
    return copy;
}

static Elf_Scn *find_section(Elf *elf, const char *wanted, GElf_Shdr *header)
{
    size_t names;
    if (elf_getshdrstrndx(elf, &names) != 0)
        return NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        if (!gelf_getshdr(scn, header))
            continue;
        const char *name = elf_strptr(elf, names, header->sh_name);
        if (name && strcmp(name, wanted) == 0)
            return scn;
    }
    return NULL;
}

static gboolean read_sleds(struct trace *trace, Elf *elf, struct xray_symbols *symbols)
{
    GElf_Shdr header;
    Elf_Scn *scn = find_section(elf, "xray_instr_map", &header);
    if (!scn) {
        trace_error(trace, "xray_binary", 0, "the binary has no xray_instr_map section");
        return FALSE;
    }
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || !data->d_buf || data->d_size > LIMIT_XRAY_ELF_SECTION || data->d_size / 32 > LIMIT_XRAY_SLEDS) {
        trace_error(trace, "xray_binary", header.sh_offset, "xray_instr_map cannot be read");
        return FALSE;
    }
    uint64_t current = 0;   /* sleds of address 0 before the first function are skipped too */
    for (size_t i = 0; i + 32 <= data->d_size; i += 32) {
        const uint8_t *sled = (const uint8_t *)data->d_buf + i;
        uint64_t function = load_le64(sled + 8);
        if (sled[18] >= 2)   /* version 2 sleds hold addresses relative to themselves */
            function += header.sh_addr + i + 8;
        if (function == current)
            continue;
        current = function;
        g_array_append_val(symbols->addresses, function);
    }
    return TRUE;
}

static int compare_symbols(const void *a, const void *b)
{
    const struct elf_symbol *x = a, *y = b;
    if (x->address != y->address)
        return x->address < y->address ? -1 : 1;
    return y->global - x->global;   /* global names first */
}

static GArray *read_function_symbols(Elf *elf)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(struct elf_symbol));
    GElf_Shdr header;
    Elf_Scn *scn = find_section(elf, ".symtab", &header);
    if (!scn)
        scn = find_section(elf, ".dynsym", &header);
    if (!scn || header.sh_entsize == 0)
        return out;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data)
        return out;
    size_t count = header.sh_size / header.sh_entsize;
    for (size_t i = 0; i < count; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym))
            break;
        if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0)
            continue;
        const char *name = elf_strptr(elf, header.sh_link, sym.st_name);
        if (!name || !*name)
            continue;
        struct elf_symbol s = { sym.st_value, sym.st_size, name, GELF_ST_BIND(sym.st_info) != STB_LOCAL };
        g_array_append_val(out, s);
    }
    g_array_sort(out, compare_symbols);
    return out;
}

/* The symbol that starts at address or covers it. */
static const struct elf_symbol *symbol_at(GArray *symbols, uint64_t address)
{
    size_t after = SORTED_UPTO(symbols, struct elf_symbol, address, address);   /* the first starting past it */
    if (after == 0)
        return NULL;
    /* The first of the symbols that start where the one before `after` does. */
    uint64_t start = g_array_index(symbols, struct elf_symbol, after - 1).address;
    const struct elf_symbol *s =
        &g_array_index(symbols, struct elf_symbol, SORTED_BELOW(symbols, struct elf_symbol, address, start));
    if (s->address == address || address - s->address < s->size)
        return s;
    return NULL;
}

static struct xray_symbols *load_elf(struct trace *trace, Elf *elf)
{
    if (elf_kind(elf) != ELF_K_ELF) {
        trace_error(trace, "xray_binary", 0, "the binary is not an ELF file");
        return NULL;
    }
    struct xray_symbols *symbols = g_new0(struct xray_symbols, 1);
    symbols->addresses = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    symbols->names = g_ptr_array_new_with_free_func(g_free);
    if (!read_sleds(trace, elf, symbols)) {
        xray_symbols_free(symbols);
        return NULL;
    }
    GArray *table = read_function_symbols(elf);
    for (guint i = 0; i < symbols->addresses->len; i++) {
        const struct elf_symbol *s = symbol_at(table, g_array_index(symbols->addresses, uint64_t, i));
        char *name = s ? xray_demangle(s->name) : NULL;
        if (name)   /* one record, one line in the text views */
            g_strdelimit(name, "\n\r", ' ');
        g_ptr_array_add(symbols->names, name);
    }
    g_array_free(table, TRUE);
    return symbols;
}

struct xray_symbols *xray_symbols_load(struct trace *trace, const char *path)
{
    struct stat st;
    int fd = input_open_at(AT_FDCWD, path, INPUT_REGULAR, &st);
    if (fd < 0) {
        trace_error(trace, "xray_binary", 0, "cannot open %s: %s", path, input_strerror(fd, INPUT_REGULAR));
        return NULL;
    }
    struct xray_symbols *symbols = NULL;
    if (elf_version(EV_CURRENT) != EV_NONE) {
        Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
        if (elf) {
            symbols = load_elf(trace, elf);
            elf_end(elf);
        } else {
            trace_error(trace, "xray_binary", 0, "%s: %s", path, elf_errmsg(-1));
        }
    }
    close(fd);
    return symbols;
}

void xray_symbols_free(struct xray_symbols *symbols)
{
    if (!symbols)
        return;
    g_array_free(symbols->addresses, TRUE);
    g_ptr_array_free(symbols->names, TRUE);
    g_free(symbols);
}

uint32_t xray_symbols_function_count(const struct xray_symbols *symbols)
{
    return symbols->addresses->len;
}

const char *xray_symbols_name(const struct xray_symbols *symbols, int32_t func_id)
{
    if (!symbols || func_id < 1 || (guint)func_id > symbols->names->len)
        return NULL;
    return g_ptr_array_index(symbols->names, (guint)func_id - 1);
}

/* What llvm-xray shows as a function: the id without a binary; with one,
 * as --symbolize shows it: the demangled symbol, "@(<hex address>)" without
 * one, "#<id>" for an id not in the map. */
void xray_function_label(const struct xray_state *state, uint32_t func_id, GString *out)
{
    const struct xray_symbols *symbols = state->symbols;
    int32_t id = (int32_t)func_id;
    if (!symbols || id < 1 || (guint)id > symbols->addresses->len) {
        g_string_append_printf(out, symbols ? "#%" PRId32 : "%" PRId32, id);
        return;
    }
    const char *name = xray_symbols_name(symbols, id);
    if (name)
        g_string_append(out, name);
    else
        g_string_append_printf(out, "@(%" PRIx64 ")", g_array_index(symbols->addresses, uint64_t, (guint)id - 1));
}
