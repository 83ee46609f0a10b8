/* What the emulator tells of itself: the summary's Engine, Lockstep
 * and "On the real CPU most" lines, and its self-test (cachetrace
 * --check). */
#include "emulate.h"

#include <inttypes.h>
#include <stdio.h>
#include <capstone/capstone.h>
#include <unicorn/unicorn.h>

#include "emumem.h"
#include "hostenv.h"
#include "modelq.h"
#include "tracer.h"

/* ---- the summary ---- */

void emu_describe(const struct tracer *tr, FILE *f, const char *prefix)
{
	const struct emu *em = tr->emu;
	if (!em)
		return;
	uint64_t reads, writes, bad, dropped;
	emumem_stats(em->mem, &reads, &writes, &bad, &dropped);
	fprintf(f, "%sEngine: %s: %" PRIu64 " instructions emulated", prefix,
		tr->engine->name, em->emulated);
	if (em->natives)
		fprintf(f, " (%" PRIu64 " of them VEX/EVEX/BMI on our own "
			"CPU)", em->natives);
	fprintf(f, ", %" PRIu64 " on the real CPU", em->fallbacks);
	fprintf(f, "; %" PRIu64 " pages read, %" PRIu64 " written back",
		reads, writes);
	if (bad)
		fprintf(f, ", %" PRIu64 " unreadable", bad);
	if (dropped)
		fprintf(f, ", %" PRIu64 " dropped past the mirror budget",
			dropped);
	if (em->parked)
		fprintf(f, "; %" PRIu64 " turns given away in a futex wait",
			em->parked);
	if (tr->eng.q)
		fprintf(f, "; the models on CPU %d", modelq_cpu(tr->eng.q));
	fputc('\n', f);
	if (em->lockstep)
		fprintf(f, "%sLockstep: %" PRIu64 " instructions compared, %"
			PRIu64 " divergence%s\n", prefix, em->compared,
			em->divergences, em->divergences == 1 ? "" : "s");
	insn_tally_print(em->fb, f, prefix, "On the real CPU most");
}

bool emu_diverged(const struct tracer *tr)
{
	return tr->emu && tr->emu->divergences;
}

uint64_t emu_emulated(const struct tracer *tr)
{
	return tr->emu ? tr->emu->emulated : 0;
}

/* ---- the self-test (cachetrace --check) ---- */

int emu_selftest(char *why, size_t len)
{
	/* mov ecx, 1000; xor eax, eax; 1: add rax, rcx; dec rcx; jnz 1b;
	 * mov [rip + 0x100], rax */
	static const uint8_t code[] = {
		0xb9, 0xe8, 0x03, 0x00, 0x00, 0x31, 0xc0, 0x48, 0x01, 0xc8,
		0x48, 0xff, 0xc9, 0x75, 0xf8, 0x48, 0x89, 0x05, 0x00, 0x01,
		0x00, 0x00,
	};
	const uint64_t base = 0x10000;
	uint64_t rax = 0, stored = 0;
	uc_engine *uc;
	uc_err err = uc_open(UC_ARCH_X86, UC_MODE_64, &uc);
	if (err != UC_ERR_OK) {
		snprintf(why, len, "uc_open: %s", uc_strerror(err));
		return -1;
	}
	err = uc_mem_map(uc, base, 4096, UC_PROT_ALL);
	if (err == UC_ERR_OK)
		err = uc_mem_write(uc, base, code, sizeof(code));
	if (err == UC_ERR_OK)
		err = uc_emu_start(uc, base, base + sizeof(code), 0, 0);
	if (err == UC_ERR_OK)
		err = uc_reg_read(uc, UC_X86_REG_RAX, &rax);
	if (err == UC_ERR_OK)
		err = uc_mem_read(uc, base + sizeof(code) + 0x100, &stored, 8);
	/* The registers in place (find_gprs), as a window would find them,
	 * and holding the loop's sum after a second run. */
	const char *regs = "read through its API (CACHETRACE_HOST=uc-regs=api)";
	if (err == UC_ERR_OK && !host_forced("uc-regs", "api")) {
		slot_table_init();
		const uint64_t *g = find_gprs(uc);
		regs = "read through its API (QEMU's register array not found)";
		if (g && uc_emu_start(uc, base, base + sizeof(code), 0, 0) ==
		    UC_ERR_OK && g[0] == 500500)
			regs = "read in place (QEMU's register array, found "
			       "and proven)";
	}
	uc_close(uc);
	if (err != UC_ERR_OK) {
		snprintf(why, len, "%s", uc_strerror(err));
		return -1;
	}
	/* 1 + 2 + ... + 1000 */
	if (rax != 500500 || stored != 500500) {
		snprintf(why, len, "a loop summing 1..1000 gave %" PRIu64
			 " (stored %" PRIu64 "), not 500500", rax, stored);
		return -1;
	}
	unsigned major, minor;
	unsigned v = uc_version(&major, &minor);
	snprintf(why, len, "Unicorn %u.%u.%u runs the self-test program; its "
		 "registers are %s; each store's check for translated code %s",
		 major, minor, v >> 8 & 0xff, regs, emu_store_path());
	return 0;
}
