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

/* One function symbol of a module's lookup table. */
struct fsym {
	uint64_t addr;		/* biased: a process address */
	uint64_t size;		/* after valgrind's overlap truncation */
	const char *name;	/* libdw's string, valid while the module is */
};

/* What we keep per libdwfl module; rebuilt after every sym_refresh. */
struct modinfo {
	Dwfl_Module *mod;
	const char *name;	/* interned module name ("/lib/.../libc.so.6") */
	const char *base;	/* its basename */
	uint64_t low, high;
	bool is_main;
	bool syms_built;
	struct fsym *syms;	/* sorted, non-overlapping */
	size_t n_syms;
	size_t n_funcs;		/* defined function symbols in the symtab */
};

struct pc_entry {
	uint64_t pc;
	struct src_loc loc;
	bool kept;			/* sym_keep_names: survives refreshes */
};

struct symbols {
	pid_t pid;
	Dwfl *dwfl;
	char *exe;			/* /proc/PID/exe target */

	struct modinfo *mods;		/* in search order (cmp_mod) */
	size_t n_mods;

	struct pc_entry *pcs;		/* answers so far, found through */
	uint32_t n_pcs, cap_pcs;
	struct hashtab pc_map;		/* pc -> index in pcs */

	struct strintern strs;		/* the names handed out */
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static const char unknown[] = "???";
static const char below_main[] = "(below main)";

/* ---- interned strings ---- */

/* The interned copy of the N bytes at STR. */
static const char *intern_n(struct symbols *s, const char *str, size_t n)
{
	return strintern(&s->strs, str, n);
}

static const char *intern(struct symbols *s, const char *str)
{
	return intern_n(s, str, strlen(str));
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

static bool is_func_sym(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC)
		&& sym->st_shndx != SHN_UNDEF;
}

static void build_syms(struct modinfo *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	size_t cap = 0;

	m->syms_built = true;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym,
				&addr, NULL, NULL, NULL);

		if (!name || !is_func_sym(&sym))
			continue;
		m->n_funcs++;
		if (!*name || sym.st_size == 0)
			continue;
		if (m->n_syms == cap) {
			cap = cap ? cap * 2 : 256;
			m->syms = xreallocarray(m->syms, cap, sizeof(*m->syms));
		}
		m->syms[m->n_syms++] = (struct fsym){
			.addr = addr, .size = sym.st_size, .name = name,
		};
	}
	m->n_syms = canonicalise(m->syms, m->n_syms);
}

static const struct fsym *find_fsym(struct modinfo *m, uint64_t pc)
{
	size_t lo = 0, hi;

	if (!m->syms_built)
		build_syms(m);
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

/* The name valgrind shows: "foo@VER" (a non-default version) as "foo",
 * "foo@@VER" unchanged. */
static const char *display_name(struct symbols *s, const char *name)
{
	const char *at = strchr(name, '@');

	if (at && at[1] != '@')
		return intern_n(s, name, (size_t)(at - name));
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

int sym_refresh(struct symbols *s, char *err, size_t errlen)
{
	dwfl_report_begin(s->dwfl);
	return report(s, err, errlen);
}

/* ---- lines ---- */

/* FILE as Cachegrind names it: libdw's dir/name, under comp_dir when
 * relative. */
static const char *cg_file_name(struct symbols *s, Dwarf_Die *cu,
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
		loc->file = cg_file_name(s, cu, file);
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

/* ---- resolving --start/--stop locations ---- */

/* NAME equals WANT, or does once its "@VER" / "@@VER" suffix is gone. */
static bool name_matches(const char *name, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(name, want, n) && (name[n] == '\0' || name[n] == '@');
}

/* Optimal string alignment distance: Levenshtein plus the transposition
 * of two adjacent characters as one edit, the commonest typo ("wrok" is
 * one edit from "work", two from "brk" and "ftok"). */
static size_t edit_distance(const char *a, size_t la, const char *b,
			    size_t lb)
{
	size_t r2[128], r1[128], r0[128];	/* rows j-2, j-1, j */

	if (la >= sizeof(r0) / sizeof(r0[0]))
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		r1[i] = i;
	for (size_t j = 1; j <= lb; j++) {
		r0[0] = j;
		for (size_t i = 1; i <= la; i++) {
			size_t best = r1[i - 1] + (a[i - 1] != b[j - 1]);

			if (r1[i] + 1 < best)
				best = r1[i] + 1;
			if (r0[i - 1] + 1 < best)
				best = r0[i - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && r2[i - 2] + 1 < best)
				best = r2[i - 2] + 1;
			r0[i] = best;
		}
		memcpy(r2, r1, (la + 1) * sizeof(r1[0]));
		memcpy(r1, r0, (la + 1) * sizeof(r0[0]));
	}
	return r1[la];
}

struct suggest {
	const char *name[3];	/* interned */
	size_t dist[3];
	size_t n;
	size_t max_dist;
};

static void suggest_add(struct suggest *sg, struct symbols *s,
			const char *want, const char *name)
{
	const char *at = strchr(name, '@');
	size_t ln = at ? (size_t)(at - name) : strlen(name);
	size_t lw = strlen(want);
	size_t d;
	const char *iname;
	size_t k;

	/* the distance is at least the difference in length */
	if ((ln > lw ? ln - lw : lw - ln) > sg->max_dist)
		return;
	d = edit_distance(want, lw, name, ln);
	if (d > sg->max_dist || d == 0)
		return;
	if (sg->n == 3 && d > sg->dist[2])
		return;
	iname = intern_n(s, name, ln);
	if (sg->n == 3 && d == sg->dist[2] && strcmp(iname, sg->name[2]) >= 0)
		return;
	for (k = 0; k < sg->n; k++)
		if (sg->name[k] == iname)
			return;
	for (k = sg->n < 3 ? sg->n : 2; k > 0; k--) {
		if (sg->dist[k - 1] < d || (sg->dist[k - 1] == d
		    && strcmp(sg->name[k - 1], iname) <= 0))
			break;
		if (k < 3) {
			sg->name[k] = sg->name[k - 1];
			sg->dist[k] = sg->dist[k - 1];
		}
	}
	if (k < 3) {
		sg->name[k] = iname;
		sg->dist[k] = d;
		if (sg->n < 3)
			sg->n++;
	}
}

/* Look WANT up in module M; 1 found (*addr, *ifunc set), 0 not. */
static int find_in_module(struct symbols *s, struct modinfo *m,
			  const char *want, struct suggest *sg,
			  uint64_t *addr, bool *ifunc)
{
	int n = dwfl_module_getsymtab(m->mod);
	int best = -1, best_rank = INT_MAX;
	GElf_Sym best_sym;
	GElf_Addr best_addr = 0;

	if (!m->syms_built)
		build_syms(m);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym,
				&a, NULL, NULL, NULL);
		int rank;

		if (!name || !*name || !is_func_sym(&sym))
			continue;
		if (!name_matches(name, want)) {
			if (sg)
				suggest_add(sg, s, want, name);
			continue;
		}
		/* exact over versioned; global over weak over local */
		rank = (strcmp(name, want) ? 4 : 0)
			+ (GELF_ST_BIND(sym.st_info) == STB_GLOBAL ? 0
			   : GELF_ST_BIND(sym.st_info) == STB_WEAK ? 1 : 2);
		if (rank < best_rank) {
			best = i;
			best_rank = rank;
			best_sym = sym;
			best_addr = a;
		}
	}
	if (best < 0)
		return 0;
	*addr = best_addr;
	*ifunc = GELF_ST_TYPE(best_sym.st_info) == STT_GNU_IFUNC;
	return 1;
}

static bool parse_u64(const char *p, uint64_t *v)
{
	char *end;

	if (!*p || *p == '-' || *p == '+' || *p == ' ')
		return false;
	errno = 0;
	*v = strtoull(p, &end, 0);
	return !errno && *end == '\0';
}

/* The position of the ':' separating MODULE:SYMBOL or FILE:LINE, or NULL;
 * "::" (C++ scopes) is no separator. */
static const char *find_colon(const char *loc)
{
	const char *found = NULL;

	for (const char *p = loc; *p; p++)
		if (*p == ':' && p[1] != ':' && (p == loc || p[-1] != ':'))
			found = p;
	return found;
}

static void list_modules(char *buf, size_t len, struct modinfo **ms,
			 size_t n)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				 ms[i]->base);

		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/* SYM as NAME[+OFF]: NAME into WANT (WANT_SIZE bytes), the offset into
 * *OFF.  Returns NAME's length, or 0 with ERR set. */
static size_t split_sym_offset(const char *sym, char *want, size_t want_size,
			       uint64_t *off, char *err, size_t errlen)
{
	const char *plus = strrchr(sym, '+');
	size_t wlen;

	if (plus && plus != sym) {
		if (!parse_u64(plus + 1, off)) {
			snprintf(err, errlen, "bad offset '%s' in '%s'",
				 plus + 1, sym);
			return 0;
		}
		wlen = (size_t)(plus - sym);
	} else {
		wlen = strlen(sym);
	}
	if (wlen == 0 || wlen >= want_size) {
		snprintf(err, errlen, "bad symbol name '%s'", sym);
		return 0;
	}
	memcpy(want, sym, wlen);
	want[wlen] = '\0';
	return wlen;
}

/* The "not found" hint: the modules without a symbol table (STRIPPED of
 * the N in MS), then the near names SG suggests. */
static void not_found_hint(char *hint, size_t size, struct modinfo **ms,
			   size_t n, size_t stripped, const struct suggest *sg)
{
	if (stripped) {
		size_t off2 = 0;

		for (size_t i = 0; i < n; i++)
			if (ms[i]->n_funcs == 0) {
				int w = snprintf(hint + off2, size - off2,
						 "%s%s", off2 ? ", " : "; ",
						 ms[i]->base);
				if (w < 0 || (size_t)w >= size - off2)
					break;
				off2 += (size_t)w;
			}
		snprintf(hint + strlen(hint), size - strlen(hint),
			 " %s no symbol table", stripped > 1 ? "have" : "has");
	}
	if (sg->n) {
		size_t l = strlen(hint);

		if (sg->n == 1)
			snprintf(hint + l, size - l,
				 "; did you mean '%s'?", sg->name[0]);
		else if (sg->n == 2)
			snprintf(hint + l, size - l,
				 "; did you mean '%s' or '%s'?", sg->name[0],
				 sg->name[1]);
		else
			snprintf(hint + l, size - l,
				 "; did you mean '%s', '%s' or '%s'?",
				 sg->name[0], sg->name[1], sg->name[2]);
	}
}

static enum sym_resolve_result resolve_symbol(struct symbols *s,
		const char *modname, const char *sym, uint64_t *addr,
		char *err, size_t errlen)
{
	char want[256], names[512], hint[256] = "";
	uint64_t off = 0, a;
	struct modinfo **ms;
	struct suggest sg = { .n = 0 };
	size_t n = 0, stripped = 0;
	bool ifunc;
	size_t wlen;

	wlen = split_sym_offset(sym, want, sizeof(want), &off, err, errlen);
	if (!wlen)
		return SYM_BAD_SYNTAX;
	ms = xcalloc(s->n_mods + 1, sizeof(*ms));
	for (size_t i = 0; i < s->n_mods; i++)
		if (!modname || !strncmp(s->mods[i].base, modname,
					 strlen(modname)))
			ms[n++] = &s->mods[i];
	if (modname && n == 0) {
		snprintf(err, errlen, "no module '%s' is mapped (yet)",
			 modname);
		free(ms);
		return SYM_NOT_YET;
	}

	sg.max_dist = wlen / 3 > 2 ? wlen / 3 : 2;
	for (size_t i = 0; i < n; i++) {
		if (find_in_module(s, ms[i], want, &sg, &a, &ifunc)) {
			*addr = a + off;
			if (ifunc)
				snprintf(err, errlen, "'%s' in %s is an IFUNC: "
					 "its address is that of the resolver, "
					 "not of the implementation it picks",
					 want, ms[i]->base);
			else if (errlen)
				err[0] = '\0';
			free(ms);
			return SYM_FOUND;
		}
		if (ms[i]->n_funcs == 0)
			stripped++;
	}

	list_modules(names, sizeof(names), ms, n);
	not_found_hint(hint, sizeof(hint), ms, n, stripped, &sg);
	snprintf(err, errlen, "symbol '%s' not found in %s%s", want, names,
		 hint);
	free(ms);
	return SYM_NOT_FOUND;
}

/* NAME is FILE or ends in "/FILE". */
static bool file_matches(const char *name, const char *file)
{
	size_t ln = strlen(name), lf = strlen(file);

	if (ln < lf || strcmp(name + ln - lf, file))
		return false;
	return ln == lf || name[ln - lf - 1] == '/';
}

static bool cu_names_file(struct symbols *s, Dwarf_Die *cu, const char *file)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		const char *f = dwarf_filesrc(files, i, NULL, NULL);

		if (f && (file_matches(f, file)
			  || file_matches(cg_file_name(s, cu, f), file)))
			return true;
	}
	return false;
}

static enum sym_resolve_result resolve_line(struct symbols *s,
		const char *file, unsigned want_line, uint64_t *addr,
		char *err, size_t errlen)
{
	bool found = false;
	uint64_t best = UINT64_MAX;

	for (size_t i = 0; i < s->n_mods; i++) {
		Dwfl_Module *mod = s->mods[i].mod;
		Dwarf_Die *cu = NULL;
		Dwarf_Addr bias;

		while ((cu = dwfl_module_nextcu(mod, cu, &bias)) != NULL) {
			Dwarf_Lines *lines;
			size_t n;

			if (!cu_names_file(s, cu, file)
			    || dwarf_getsrclines(cu, &lines, &n) != 0)
				continue;
			for (size_t k = 0; k < n; k++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, k);
				int lineno;
				bool stmt, end;
				Dwarf_Addr a;
				const char *f;

				if (dwarf_lineno(l, &lineno) != 0
				    || lineno < 0
				    || (unsigned)lineno != want_line
				    || dwarf_linebeginstatement(l, &stmt) != 0
				    || !stmt
				    || dwarf_lineendsequence(l, &end) != 0
				    || end
				    || dwarf_lineaddr(l, &a) != 0)
					continue;
				f = dwarf_linesrc(l, NULL, NULL);
				if (!f || !(file_matches(f, file)
					    || file_matches(cg_file_name(s, cu, f),
							    file)))
					continue;
				if (a + bias < best)
					best = a + bias;
				found = true;
			}
		}
	}
	if (!found) {
		snprintf(err, errlen, "no code at %s:%u", file, want_line);
		return SYM_NOT_FOUND;
	}
	*addr = best;
	if (errlen)
		err[0] = '\0';
	return SYM_FOUND;
}

enum sym_resolve_result sym_resolve(struct symbols *s, const char *loc,
				    uint64_t *addr, char *err, size_t errlen)
{
	const char *colon;
	char left[PATH_MAX];
	uint64_t v;

	if (!loc || !*loc) {
		snprintf(err, errlen, "empty location");
		return SYM_BAD_SYNTAX;
	}
	if (loc[0] == '0' && (loc[1] == 'x' || loc[1] == 'X')) {
		if (!parse_u64(loc, &v)) {
			snprintf(err, errlen, "bad address '%s'", loc);
			return SYM_BAD_SYNTAX;
		}
		*addr = v;
		if (errlen)
			err[0] = '\0';
		return SYM_FOUND;
	}
	colon = find_colon(loc);
	if (!colon)
		return resolve_symbol(s, NULL, loc, addr, err, errlen);
	if (colon == loc || !colon[1]
	    || (size_t)(colon - loc) >= sizeof(left)) {
		snprintf(err, errlen, "bad location '%s' (expected FILE:LINE "
			 "or MODULE:SYMBOL)", loc);
		return SYM_BAD_SYNTAX;
	}
	memcpy(left, loc, (size_t)(colon - loc));
	left[colon - loc] = '\0';
	if (colon[1] >= '0' && colon[1] <= '9') {
		char *end;
		unsigned long line;

		errno = 0;
		line = strtoul(colon + 1, &end, 10);
		if (errno || *end || line == 0 || line > UINT_MAX) {
			snprintf(err, errlen, "bad line number in '%s'", loc);
			return SYM_BAD_SYNTAX;
		}
		return resolve_line(s, left, (unsigned)line, addr, err,
				    errlen);
	}
	return resolve_symbol(s, left, colon + 1, addr, err, errlen);
}

const char *sym_data_name(struct symbols *s, uint64_t addr, char *buf,
			  size_t len)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	if (!mod)
		return NULL;
	/* Any sized symbol covering the address: data objects, TLS aside. */
	GElf_Sym sym;
	GElf_Off off;
	const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL,
						NULL, NULL);
	if (!name || (GELF_ST_TYPE(sym.st_info) != STT_OBJECT &&
		      GELF_ST_TYPE(sym.st_info) != STT_COMMON))
		return NULL;
	if (off)
		snprintf(buf, len, "%s+0x%" PRIx64, name, (uint64_t)off);
	else
		snprintf(buf, len, "%s", name);
	return buf;
}

int sym_resolve_data(struct symbols *s, const char *name, uint64_t *addr,
		     uint64_t *size, char *err, size_t errlen)
{
	for (size_t k = 0; k < s->n_mods; k++) {
		struct modinfo *m = &s->mods[k];
		int n = dwfl_module_getsymtab(m->mod);
		for (int i = 1; i < n; i++) {
			GElf_Sym sym;
			GElf_Addr a;
			const char *sn = dwfl_module_getsym_info(m->mod, i, &sym,
					&a, NULL, NULL, NULL);
			if (!sn || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
			    sym.st_shndx == SHN_UNDEF || !name_matches(sn, name))
				continue;
			*addr = a;
			*size = sym.st_size;
			return 0;
		}
	}
	snprintf(err, errlen, "no data symbol '%s' in %zu modules", name,
		 s->n_mods);
	return -1;
}
