/* What symbols.c (modules, names, lines) and symresolve.c (command-line
 * locations) share; not for the rest of the tree. */
#ifndef CT_SYMBOLS_PRIVATE_H
#define CT_SYMBOLS_PRIVATE_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#include "hashtab.h"
#include "symbols.h"

/* One function symbol of a module's lookup table. */
struct fsym {
	uint64_t addr;		/* biased: a process address */
	uint64_t size;		/* after valgrind's overlap truncation */
	const char *name;	/* libdw's string, valid while the module is */
};

/* What we keep per libdwfl module; rebuilt after every sym_refresh. */
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

const char *symtab_intern_n(struct symbols *s, const char *str, size_t n);
bool symtab_is_func_sym(const GElf_Sym *sym);
void symtab_build_syms(struct modinfo *m);
const char *symtab_cg_file_name(struct symbols *s, Dwarf_Die *cu,
				const char *file);

#endif
