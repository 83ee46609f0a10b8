/* Prints the address of a stack variable and of a fresh mmap (through a
 * large malloc), then calls marker() (a start event for the tracer). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int marker(int x)
{
	return x + 1;
}

int main(void)
{
	int local = 0;
	void *big = malloc(1 << 20);

	printf("stack %p mmap %p\n", (void *)&local, big);
	fflush(stdout);
	free(big);
	return marker(local) - 1;
}
