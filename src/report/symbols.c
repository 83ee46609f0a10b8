/* Symbols and source lines of a live process, named as Cachegrind 3.19
 * names them, so that our profiles and valgrind's line up.
 *
 * Measured against `valgrind --tool=cachegrind` on this machine:
 * - fl= is the DWARF line table's directory joined to the file name, and a
 *   relative directory is itself prefixed with DW_AT_comp_dir: glibc's
 *   comp_dir "./csu" with directory "../csu" and file "libc-start.c" gives
 *   "./csu/../csu/libc-start.c", directory 0 ("./csu") gives
 *   "./csu/./csu/init-first.c".  libdw joins directory and name, so we only
 *   prefix comp_dir when its result is relative.
 * - Every row of the line table counts, is_stmt or not (gcc -O2 puts a
 *   ret on a non-stmt row of the next line: valgrind charges that line); a
 *   row covers the addresses up to the next row, so of several rows at one
 *   address the last one names it.  We search the CU's sorted line table
 *   ourselves to get exactly that rule.
 * - fn= is the ELF function symbol containing the pc, after valgrind's
 *   canonicalisation of its symbol table (storage.c): among aliases of one
 *   [address, size) the shortest name not counting an "@VERSION" suffix
 *   wins, a versioned one on equal length, then the alphabetically first
 *   ("memcpy@@GLIBC_2.14" over "memcpy", "bcmp" over "memcmp"); overlapping
 *   symbols are truncated where the next one starts.  Non-default versions
 *   ("memcpy@GLIBC_2.2.5") are shown without their suffix, default ones
 *   keep it.  _start and __libc_start_call_main are "(below main)".
 *   Where we differ on purpose: a function symbol without a size (_init,
 *   frame_dummy...) names its pcs up to the next symbol or its section's
 *   end; valgrind ignores it and shows those pcs as ??? (issue 17).
 * test-cgnames checks all this against Cachegrind's own profile; the one
 * difference left is in ld.so, where at 2 addresses valgrind keeps the
 * previous row's file across a file switch (3 of ~4100 cost centres).
 *
 * Everything returned is interned here and lives until sym_close, because
 * sym_refresh may drop libdwfl modules and their strings. */
#include "symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "hashtab.h"
#include "symbols_private.h"

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static const char unknown[] = "???";
static const char below_main[] = "(below main)";

/* ---- interned strings ---- */

/* The interned copy of the N bytes at STR. */
const char *symtab_intern_n(struct symbols *s, const char *str, size_t n)
{
	return strintern(&s->strs, str, n);
}

static const char *intern(struct symbols *s, const char *str)
{
	return symtab_intern_n(s, str, strlen(str));
}

/* ---- valgrind's symbol naming ---- */

/* storage.c's preferName: true when A is the better name for one address
 * range. */
static bool prefer_name(const char *a, const char *b)
{
	const char *va = strchr(a, '@'), *vb = strchr(b, '@');
	size_t la = va ? (size_t)(va - a) : strlen(a);
	size_t lb = vb ? (size_t)(vb - b) : strlen(b);
	int c;

	if (!strncmp(a, "MPI_", 4) && !strncmp(b, "PMPI_", 5)
	    && !strcmp(a, b + 1))
		return false;
	if (!strncmp(b, "MPI_", 4) && !strncmp(a, "PMPI_", 5)
	    && !strcmp(b, a + 1))
		return true;
	if (la && !lb)
		return true;
	if (lb && !la)
		return false;
	if (la != lb)
		return la < lb;
	if (va && !vb)
		return true;
	if (vb && !va)
		return false;
	c = strcmp(a, b);
	return c <= 0;
}

static int cmp_fsym(const void *pa, const void *pb)
{
	const struct fsym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return 0;
}

/* storage.c's canonicaliseSymtab: merge aliases, then truncate overlaps
 * (an earlier symbol ends where the next begins; of two starting at one
 * address the shorter keeps the start and the longer the rest), until
 * nothing changes. */
static size_t canonicalise(struct fsym *t, size_t n)
{
	if (n == 0)
		return 0;
	for (int round = 0; round < 64; round++) {
		bool changed = false;
		size_t w = 0;

		qsort(t, n, sizeof(*t), cmp_fsym);
		for (size_t r = 0; r < n; r++) {
			if (t[r].size == 0)
				continue;
			if (w && t[w - 1].addr == t[r].addr
			    && t[w - 1].size == t[r].size) {
				if (!prefer_name(t[w - 1].name, t[r].name))
					t[w - 1].name = t[r].name;
				continue;
			}
			t[w++] = t[r];
		}
		n = w;
		for (size_t i = 0; i + 1 < n; i++) {
			uint64_t e1 = t[i].addr + t[i].size;
			uint64_t e2 = t[i + 1].addr + t[i + 1].size;

			if (e1 <= t[i + 1].addr)
				continue;
			changed = true;
			if (t[i].addr < t[i + 1].addr) {
				t[i].size = t[i + 1].addr - t[i].addr;
			} else if (e1 < e2) {
				t[i + 1].addr = e1;
				t[i + 1].size = e2 - e1;
			}
			/* equal ranges are merged in the next round */
		}
		if (!changed)
			break;
	}
	return n;
}

bool symtab_is_func_sym(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC)
		&& sym->st_shndx != SHN_UNDEF;
}

/* The end (a process address) of the section holding a symbol, or 0. */
static uint64_t section_end(Elf *elf, GElf_Word shndx, Dwarf_Addr bias)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf && shndx != SHN_UNDEF && shndx < SHN_LORESERVE ?
		elf_getscn(elf, shndx) : NULL;

	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
		return 0;
	return sh.sh_addr + sh.sh_size + bias;
}

static void add_fsym(struct modinfo *m, size_t *cap, struct fsym f)
{
	if (m->n_syms == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		m->syms = xreallocarray(m->syms, *cap, sizeof(*m->syms));
	}
	m->syms[m->n_syms++] = f;
}

/* The first start of a symbol of T (sorted, N) above ADDR, or LIMIT. */
static uint64_t next_start(const struct fsym *t, size_t n, uint64_t addr,
			   uint64_t limit)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && t[lo].addr < limit ? t[lo].addr : limit;
}

/* Function symbols without a size (crti's _init and _fini, crtstuff's
 * frame_dummy, deregister_tm_clones, __do_global_dtors_aux: assembly or
 * compiler-made code) cover their pcs up to the next function symbol or
 * the end of their section.  valgrind drops them (its profiles show those
 * pcs as ??? and as bare addresses); issue 17 asks for their names, as the
 * symbol table has them.  Run after canonicalise: a sized symbol keeps
 * every pc it covers. */
static void add_sizeless(struct modinfo *m, size_t *cap, struct fsym *z,
			 size_t nz)
{
	size_t n = m->n_syms;

	qsort(z, nz, sizeof(*z), cmp_fsym);
	for (size_t i = 0; i < nz; i++) {
		/* z[i].size holds its section's end until here */
		uint64_t end = next_start(m->syms, n, z[i].addr, z[i].size);
		const struct fsym *cover = NULL;

		for (size_t k = 0; k < n && m->syms[k].addr <= z[i].addr; k++)
			if (z[i].addr - m->syms[k].addr < m->syms[k].size)
				cover = &m->syms[k];
		if (cover || (i && z[i - 1].addr == z[i].addr))
			continue;	/* named already, or an alias */
		end = next_start(z, nz, z[i].addr, end);
		if (end > z[i].addr)
			add_fsym(m, cap, (struct fsym){ .addr = z[i].addr,
				 .size = end - z[i].addr, .name = z[i].name });
	}
	if (m->n_syms > n)
		qsort(m->syms, m->n_syms, sizeof(*m->syms), cmp_fsym);
}

void symtab_build_syms(struct modinfo *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	size_t cap = 0, nz = 0, capz = 0;
	struct fsym *z = NULL;		/* the sizeless ones */

	m->syms_built = true;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym,
				&addr, &shndx, &elf, &bias);

		if (!name || !symtab_is_func_sym(&sym))
			continue;
		m->n_funcs++;
		if (!*name)
			continue;
		if (sym.st_size) {
			add_fsym(m, &cap, (struct fsym){
				.addr = addr, .size = sym.st_size, .name = name,
			});
			continue;
		}
		uint64_t end = section_end(elf, shndx, bias);
		if (end <= addr)
			continue;
		if (nz == capz) {
			capz = capz ? capz * 2 : 16;
			z = xreallocarray(z, capz, sizeof(*z));
		}
		z[nz++] = (struct fsym){ .addr = addr, .size = end, .name = name };
	}
	m->n_syms = canonicalise(m->syms, m->n_syms);
	if (nz)
		add_sizeless(m, &cap, z, nz);
	free(z);
}

static const struct fsym *find_fsym(struct modinfo *m, uint64_t pc)
{
	size_t lo = 0, hi;

	if (!m->syms_built)
		symtab_build_syms(m);
	hi = m->n_syms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (pc - m->syms[lo - 1].addr < m->syms[lo - 1].size)
		return &m->syms[lo - 1];
	return NULL;
}

/* The name valgrind shows: the symbol's own string, "foo@VER" and
 * "foo@@VER" as they are (.symtab's names of .symver'ed symbols carry
 * them: Cachegrind shows libm's __exp_finite@GLIBC_2.15, a compat
 * version, and memcpy@@GLIBC_2.14, the default one). */
static const char *display_name(struct symbols *s, const char *name)
{
	return intern(s, name);
}

/* m_debuginfo's below-main renaming (valgrind's default
 * --show-below-main=no), as observed with glibc 2.36. */
static bool is_below_main(const char *name)
{
	return !strcmp(name, "__libc_start_call_main")
		|| !strcmp(name, "__libc_start_main")
		|| !strcmp(name, "generic_start_main")
		|| !strcmp(name, "_start");
}

/* ---- modules ---- */

static void free_mods(struct symbols *s)
{
	for (size_t i = 0; i < s->n_mods; i++)
		free(s->mods[i].syms);
	free(s->mods);
	s->mods = NULL;
	s->n_mods = 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

struct collect_arg {
	struct symbols *s;
	size_t cap;
};

static int collect_module(Dwfl_Module *mod, void **userdata,
			  const char *name, Dwarf_Addr low, void *arg)
{
	struct collect_arg *c = arg;
	struct symbols *s = c->s;
	struct modinfo *m;
	Dwarf_Addr start, end;

	if (s->n_mods == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		s->mods = xreallocarray(s->mods, c->cap, sizeof(*s->mods));
	}
	dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	m = &s->mods[s->n_mods++];
	*m = (struct modinfo){
		.mod = mod,
		.name = intern(s, name ? name : unknown),
		.low = start,
		.high = end,
	};
	/* libdwfl calls the vdso "[vdso: PID]"; valgrind and maps say
	 * "[vdso]". */
	if (!strncmp(m->name, "[vdso", 5))
		m->name = intern(s, "[vdso]");
	m->base = base_name(m->name);
	m->is_main = s->exe && !strcmp(m->name, s->exe);
	return DWARF_CB_OK;
}

/* Search order, close to the dynamic linker's global scope: the
 * executable, the libraries in load order (ld.so maps them top-down, so by
 * descending address), ld.so itself, then the vdso. */
static int mod_rank(const struct modinfo *m)
{
	if (m->is_main)
		return 0;
	if (m->name[0] == '[')
		return 3;
	if (!strncmp(m->base, "ld-linux", 8) || !strncmp(m->base, "ld.so", 5)
	    || !strncmp(m->base, "ld64.so", 7))
		return 2;
	return 1;
}

static int cmp_mod(const void *pa, const void *pb)
{
	const struct modinfo *a = pa, *b = pb;
	int ra = mod_rank(a), rb = mod_rank(b);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (a->low != b->low)
		return a->low > b->low ? -1 : 1;
	return 0;
}

/* Report the process's mappings to libdwfl; with the <0 (libdw error),
 * >0 (errno), 0 convention of libdwfl.  Our module list is rebuilt even on
 * failure: dwfl_report_end drops the modules not reported again. */
static struct modinfo *find_mod(struct symbols *s, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);

	if (!mod)
		return NULL;
	for (size_t i = 0; i < s->n_mods; i++)
		if (s->mods[i].mod == mod)
			return &s->mods[i];
	return NULL;
}

static uint64_t pc_hash(const void *ctx, uint32_t i);

/* After re-reading the mappings: a cached answer may predate a mapping
 * and is forgotten, unless sym_keep_names kept it (its library was about
 * to be unloaded: the name it had then is the one it ran under). */
static void forget_unkept_pcs(struct symbols *s)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < s->n_pcs; i++)
		if (s->pcs[i].kept)
			s->pcs[kept++] = s->pcs[i];
	s->n_pcs = kept;
	hashtab_clear(&s->pc_map);
	for (uint32_t i = 0; i < kept; i++)
		hashtab_add(&s->pc_map, hash_u64(s->pcs[i].pc), i, pc_hash, s);
}

static int report(struct symbols *s, char *err, size_t errlen)
{
	struct collect_arg c = { .s = s };
	int r, ret = 0;

	r = dwfl_linux_proc_report(s->dwfl, s->pid);
	if (r < 0) {
		snprintf(err, errlen, "reading mappings of %d: %s", s->pid,
			 dwfl_errmsg(-1));
		ret = -1;
	} else if (r > 0) {
		snprintf(err, errlen, "reading mappings of %d: %s", s->pid,
			 strerror(r));
		ret = -1;
	}
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0 && ret == 0) {
		snprintf(err, errlen, "reading mappings of %d: %s", s->pid,
			 dwfl_errmsg(-1));
		ret = -1;
	}
	free_mods(s);
	if (dwfl_getmodules(s->dwfl, collect_module, &c, 0) < 0 && ret == 0) {
		snprintf(err, errlen, "listing modules of %d: %s", s->pid,
			 dwfl_errmsg(-1));
		ret = -1;
	}
	if (s->n_mods)
		qsort(s->mods, s->n_mods, sizeof(*s->mods), cmp_mod);
	forget_unkept_pcs(s);
	return ret;
}


struct symbols *sym_open(pid_t pid, char *err, size_t errlen)
{
	struct symbols *s = xcalloc(1, sizeof(*s));
	char path[64];

	s->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	s->exe = realpath(path, NULL);
	s->dwfl = dwfl_begin(&proc_callbacks);
	if (!s->dwfl) {
		snprintf(err, errlen, "dwfl_begin: %s", dwfl_errmsg(-1));
		sym_close(s);
		return NULL;
	}
	dwfl_report_begin(s->dwfl);
	if (report(s, err, errlen) < 0) {
		sym_close(s);
		return NULL;
	}
	return s;
}

void sym_close(struct symbols *s)
{
	if (!s)
		return;
	free_mods(s);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	strintern_free(&s->strs);
	free(s->pcs);
	hashtab_free(&s->pc_map);
	free(s->exe);
	free(s);
}

void sym_keep_names(struct symbols *s)
{
	for (uint32_t i = 0; i < s->n_pcs; i++)
		s->pcs[i].kept = true;
}

/* The process still has mappings (a zombie's maps file is empty). */
static bool has_mappings(pid_t pid)
{
	char path[64], c;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool any = fread(&c, 1, 1, f) == 1;
	fclose(f);
	return any;
}

int sym_refresh(struct symbols *s, char *err, size_t errlen)
{
	/* Gone (killed, exited): keep what we knew rather than drop every
	 * module, so that the profile still names its functions. */
	if (!has_mappings(s->pid)) {
		snprintf(err, errlen, "process %d has no mappings left",
			 (int)s->pid);
		return -1;
	}
	dwfl_report_begin(s->dwfl);
	return report(s, err, errlen);
}

/* ---- lines ---- */

/* FILE as Cachegrind names it: libdw's dir/name, under comp_dir when
 * relative. */
const char *symtab_cg_file_name(struct symbols *s, Dwarf_Die *cu,
				const char *file)
{
	Dwarf_Attribute attr;
	const char *comp_dir;
	char *joined;
	const char *r;

	if (file[0] == '/')
		return intern(s, file);
	comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!comp_dir || !*comp_dir)
		return intern(s, file);
	joined = xasprintf("%s/%s", comp_dir, file);
	r = intern(s, joined);
	free(joined);
	return r;
}

/* The row covering PC (a CU-relative address), as valgrind's line table
 * has it, or NULL. */
static Dwarf_Line *covering_line(Dwarf_Lines *lines, size_t n, Dwarf_Addr pc)
{
	size_t lo = 0, hi = n;

	/* libdw sorts rows by address, an end_sequence before a row at the
	 * same address, keeping table order otherwise. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Addr a;

		dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a);
		if (a <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0) {
		Dwarf_Line *l = dwarf_onesrcline(lines, lo - 1);
		bool end;

		/* PC lies past the end of a sequence: in no row */
		if (dwarf_lineendsequence(l, &end) == 0 && !end)
			return l;
	}
	return NULL;
}

static void lookup_line(struct symbols *s, struct modinfo *m, uint64_t pc,
			struct src_loc *loc)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, pc, &bias);
	Dwarf_Lines *lines;
	size_t n;
	Dwarf_Line *l;
	const char *file;
	int lineno;

	if (!cu || dwarf_getsrclines(cu, &lines, &n) != 0)
		return;
	l = covering_line(lines, n, pc - bias);
	if (!l)
		return;
	file = dwarf_linesrc(l, NULL, NULL);
	if (file)
		loc->file = symtab_cg_file_name(s, cu, file);
	if (dwarf_lineno(l, &lineno) == 0 && lineno > 0)
		loc->line = (unsigned)lineno;
}

/* ---- per-pc lookups ---- */

static uint64_t pc_hash(const void *ctx, uint32_t i)
{
	const struct symbols *s = ctx;
	return hash_u64(s->pcs[i].pc);
}

void sym_lookup(struct symbols *s, uint64_t pc, struct src_loc *loc)
{
	struct hashtab_probe p;
	struct pc_entry *e;
	struct modinfo *m;
	const struct fsym *f;

	for (uint32_t i = hashtab_first(&s->pc_map, hash_u64(pc), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&s->pc_map, &p)) {
		if (s->pcs[i].pc == pc) {
			*loc = s->pcs[i].loc;
			return;
		}
	}
	if (s->n_pcs == s->cap_pcs) {
		s->cap_pcs = s->cap_pcs ? s->cap_pcs * 2 : 1024;
		s->pcs = xreallocarray(s->pcs, s->cap_pcs, sizeof(*s->pcs));
	}
	e = &s->pcs[s->n_pcs];
	e->pc = pc;
	hashtab_insert(&s->pc_map, &p, s->n_pcs++, pc_hash, s);
	e->loc = (struct src_loc){ .file = unknown, .fn = unknown, .line = 0 };
	e->kept = false;

	m = find_mod(s, pc);
	if (m) {
		f = find_fsym(m, pc);
		if (f) {
			const char *name = display_name(s, f->name);

			e->loc.fn = is_below_main(name) ? below_main : name;
		}
		lookup_line(s, m, pc, &e->loc);
	}
	*loc = e->loc;
}

int sym_function_range(struct symbols *s, uint64_t pc, uint64_t *low,
		       uint64_t *high, const char **name)
{
	struct modinfo *m = find_mod(s, pc);
	const struct fsym *f = m ? find_fsym(m, pc) : NULL;

	if (!f)
		return -1;
	*low = f->addr;
	*high = f->addr + f->size;
	if (name)
		*name = display_name(s, f->name);
	return 0;
}

const char *sym_module_name(struct symbols *s, uint64_t pc)
{
	const struct modinfo *m = find_mod(s, pc);

	return m ? m->name : NULL;
}
