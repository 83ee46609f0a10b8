/* Symbols and source lines of a live process, through elfutils libdwfl.
 *
 * Opened on a stopped, traced pid; mappings are read from /proc/PID/maps
 * and re-read by sym_refresh (after the dynamic loader has run, after
 * dlopen).  Lookups are cached per pc.  Strings returned stay valid until
 * sym_close. */
#ifndef CT_SYMBOLS_H
#define CT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbols;

/* A source location as Cachegrind names it: FILE is "dir/name" joined as
 * the DWARF line table gives them ("???" when unknown), FN the ELF symbol
 * containing the pc ("???" when none), LINE 0 when unknown. */
struct src_loc {
	const char *file;
	const char *fn;
	unsigned line;
};

struct symbols *sym_open(pid_t pid, char *err, size_t errlen);
void sym_close(struct symbols *s);

/* Re-read the process's mappings.  Returns 0 or -1 with ERR set. */
int sym_refresh(struct symbols *s, char *err, size_t errlen);

/* The pcs looked up so far keep their answers across sym_refresh: called
 * when a library is about to be unloaded (dlclose), so that its pcs stay
 * named.  A kept pc that later runs in another library mapped at the same
 * address keeps the first name. */
void sym_keep_names(struct symbols *s);

/* Fill LOC for PC; always succeeds (unknown parts are "???" / 0). */
void sym_lookup(struct symbols *s, uint64_t pc, struct src_loc *loc);

enum sym_resolve_result {
	SYM_FOUND,		/* *addr is set */
	SYM_NOT_YET,		/* names a module (lib.so:sym) not mapped yet:
				 * try again after sym_refresh */
	SYM_NOT_FOUND,		/* ERR says which modules were searched and
				 * suggests close names */
	SYM_BAD_SYNTAX,		/* ERR says what is wrong */
	SYM_NOT_CODE,		/* a data symbol (an object); ERR says so */
};

/* Resolve a location given on the command line (--start/--stop):
 *   symbol, symbol+OFF (decimal or 0x hex), 0xADDR, file.c:LINE
 *   (the lowest address of the line's statement start in any module whose
 *   line table names a file ending in "/file.c" or equal to it),
 *   lib.so:symbol (lib.so matched against the module's file name: a
 *   basename prefix, so "libc.so" and "libc.so.6" both work).
 * A symbol is looked up in the main executable first, then in every other
 * module in load order.  On SYM_FOUND, ERR is empty or holds a warning
 * worth printing (an IFUNC symbol: its address is the resolver's). */
enum sym_resolve_result sym_resolve(struct symbols *s, const char *loc,
				    uint64_t *addr, char *err, size_t errlen);

/* The [low, high) range of the function symbol containing PC, and its
 * name; returns 0 or -1 when PC is in no known function. */
int sym_function_range(struct symbols *s, uint64_t pc, uint64_t *low,
		       uint64_t *high, const char **name);

/* The file of the module (executable, library, "[vdso]") mapped at PC,
 * as /proc/PID/maps names it (what Callgrind writes as ob=); NULL when PC
 * is in no module known since the last sym_refresh. */
const char *sym_module_name(struct symbols *s, uint64_t pc);

/* "symbol" or "symbol+0xOFF" of the data object (STT_OBJECT, or any
 * sized symbol) containing ADDR, into BUF; NULL when none does. */
const char *sym_data_name(struct symbols *s, uint64_t addr, char *buf,
			  size_t len);

/* The address and size of the data object (STT_OBJECT) NAME, searched in
 * the same module order as sym_resolve.  Returns 0, or -1 with ERR set. */
int sym_resolve_data(struct symbols *s, const char *name, uint64_t *addr,
		     uint64_t *size, char *err, size_t errlen);

#endif
