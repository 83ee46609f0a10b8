/* A switch-based bytecode interpreter: the dense switch compiles to a jump
 * table, so each dispatch is an indirect jump (Bi, Bim). The program
 * computes sum(i * 3 for i in 1..N) with a loop in bytecode. */
#include <stdio.h>

enum op { OP_PUSH, OP_ADD, OP_SUB, OP_MUL, OP_DUP, OP_SWAP, OP_OVER,
	  OP_DROP, OP_JNZ, OP_LOAD, OP_STORE, OP_HALT };

static const int prog[] = {
	OP_PUSH, 300, OP_STORE, 0,	/* i = 300 */
	OP_PUSH, 0, OP_STORE, 1,	/* acc = 0 */
	/* loop (pc 8): */
	OP_LOAD, 1, OP_LOAD, 0, OP_PUSH, 3, OP_MUL, OP_ADD, OP_STORE, 1,
	OP_LOAD, 0, OP_PUSH, 1, OP_SUB, OP_DUP, OP_STORE, 0,
	OP_JNZ, 8,
	OP_LOAD, 1, OP_HALT,
};

static volatile long sink;

__attribute__((noinline)) static long run(const int *code)
{
	long stack[64], vars[4] = { 0 };
	int sp = 0, pc = 0;

	for (;;) {
		long a, b;

		switch ((enum op)code[pc++]) {
		case OP_PUSH:	stack[sp++] = code[pc++]; break;
		case OP_ADD:	b = stack[--sp]; stack[sp - 1] += b; break;
		case OP_SUB:	b = stack[--sp]; stack[sp - 1] -= b; break;
		case OP_MUL:	b = stack[--sp]; stack[sp - 1] *= b; break;
		case OP_DUP:	stack[sp] = stack[sp - 1]; sp++; break;
		case OP_SWAP:	a = stack[sp - 1]; stack[sp - 1] = stack[sp - 2];
				stack[sp - 2] = a; break;
		case OP_OVER:	stack[sp] = stack[sp - 2]; sp++; break;
		case OP_DROP:	sp--; break;
		case OP_JNZ:	a = stack[--sp];
				pc = a ? code[pc] : pc + 1; break;
		case OP_LOAD:	stack[sp++] = vars[code[pc++]]; break;
		case OP_STORE:	vars[code[pc++]] = stack[--sp]; break;
		case OP_HALT:	return stack[sp - 1];
		}
	}
}

__attribute__((noinline)) long work(void)
{
	return run(prog);
}

int main(void)
{
	sink = work();
	printf("%ld\n", (long)sink);
	return sink == 3L * 300 * 301 / 2 ? 0 : 1;
}
