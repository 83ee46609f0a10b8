/* Resolving the locations given on the command line (--start, --stop,
 * watches): symbols, symbol+offset, addresses, file:line, lib.so:symbol,
 * data objects; and a good message with close names when one is not
 * found. */
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
#include "parse.h"
#include "symbols_private.h"

/* ---- resolving --start/--stop locations ---- */

/* NAME equals WANT, or does once its "@VER" / "@@VER" suffix is gone. */
static bool name_matches(const char *name, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(name, want, n) && (name[n] == '\0' || name[n] == '@');
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
	d = parse_edit_distance(want, lw, name, ln);
	if (d > sg->max_dist || d == 0)
		return;
	if (sg->n == 3 && d > sg->dist[2])
		return;
	iname = symtab_intern_n(s, name, ln);
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

/* Look WANT up in module M; 1 found (*addr, *ifunc set), 0 not (*data
 * set when WANT is an object there: a variable, not code). */
static int find_in_module(struct symbols *s, struct modinfo *m,
			  const char *want, struct suggest *sg,
			  uint64_t *addr, bool *ifunc, bool *data)
{
	int n = dwfl_module_getsymtab(m->mod);
	int best = -1, best_rank = INT_MAX;
	GElf_Sym best_sym;
	GElf_Addr best_addr = 0;

	if (!m->syms_built)
		symtab_build_syms(m);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym,
				&a, NULL, NULL, NULL);
		int rank;

		if (!name || !*name)
			continue;
		if (!symtab_is_func_sym(&sym)) {
			int type = GELF_ST_TYPE(sym.st_info);
			if ((type == STT_OBJECT || type == STT_TLS ||
			     type == STT_COMMON) && name_matches(name, want))
				*data = true;
			continue;
		}
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
	const char *data_in = NULL;	/* a module where WANT is data */

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
		bool data = false;
		if (find_in_module(s, ms[i], want, &sg, &a, &ifunc, &data)) {
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
		if (data && !data_in)
			data_in = ms[i]->base;
	}
	if (data_in) {
		/* A variable: a start there would be a breakpoint on data
		 * (issue 26: "not found, did you mean 'arg'"). */
		snprintf(err, errlen, "'%s' in %s is a data symbol, not code "
			 "(a write to it is a data event: --start-watch=%s, "
			 "--stop-watch=%s)", want, data_in, want, want);
		free(ms);
		return SYM_NOT_CODE;
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
			  || file_matches(symtab_cg_file_name(s, cu, f), file)))
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
					    || file_matches(symtab_cg_file_name(s, cu, f),
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
