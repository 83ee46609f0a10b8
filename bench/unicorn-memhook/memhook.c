/* What Debian's Unicorn 2.0.1 tells a memory hook (issue 27, item 2):
 * runs code.bin (code.s: plain, read-modify-write, locked, SSE, stack,
 * rep string instructions) with a block hook and read/write hooks, and
 * prints each block and each access with the rip the hook reads.
 * Run by run.sh; never part of the test suite. */
#include <unicorn/unicorn.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
static void on_mem(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *ud)
{
	uint64_t rip; uc_reg_read(uc, UC_X86_REG_RIP, &rip);
	printf("  mem %s addr=%llx size=%d rip=%llx\n", type == UC_MEM_WRITE ? "W" : "R", (unsigned long long)addr, size, (unsigned long long)rip);
}
static void on_block(uc_engine *uc, uint64_t addr, uint32_t size, void *ud)
{
	printf("block %llx size %u\n", (unsigned long long)addr, size);
}
int main(void)
{
	FILE *f = fopen("code.bin", "rb");
	if (!f)
		return 1; uint8_t code[4096]; size_t n = fread(code, 1, sizeof code, f); fclose(f);
	uc_engine *uc; uc_open(UC_ARCH_X86, UC_MODE_64, &uc);
	uc_mem_map(uc, 0x10000, 0x1000, UC_PROT_ALL);
	uc_mem_map(uc, 0x20000, 0x10000, UC_PROT_ALL);
	uc_mem_write(uc, 0x10000, code, n);
	uint64_t rsp = 0x28000, rdi = 0x21000, rsi = 0x22000, rcx = 4; 
	uc_reg_write(uc, UC_X86_REG_RSP, &rsp); uc_reg_write(uc, UC_X86_REG_RDI, &rdi); uc_reg_write(uc, UC_X86_REG_RSI, &rsi); uc_reg_write(uc, UC_X86_REG_RCX, &rcx);
	uc_hook h1, h2;
	uc_hook_add(uc, &h1, UC_HOOK_BLOCK, on_block, NULL, 1, 0);
	uc_hook_add(uc, &h2, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, on_mem, NULL, 1, 0);
	uc_err e = uc_emu_start(uc, 0x10000, 0x10000 + n - 1, 0, 0);
	printf("err %s\n", uc_strerror(e));
	return 0;
}
