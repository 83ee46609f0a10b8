/* A target for tests/attach/sample.sh: f() runs twice; between the two
 * calls libm is loaded (dlopen), and the second call runs its cos() 2000
 * times: code mapped while the target ran natively between two windows. */
#include <dlfcn.h>
#include <stdio.h>

static double (*fn)(double);

__attribute__((noinline)) double f(double x)
{
	double s = 0;

	for (int i = 0; fn && i < 2000; i++)
		s += fn(x + i);
	return s + x;
}

int main(void)
{
	double s = f(1);
	void *h = dlopen("libm.so.6", RTLD_NOW);

	fn = h ? (double (*)(double))dlsym(h, "cos") : NULL;
	printf("%d %.3f\n", fn != NULL, s + f(2));
	return 0;
}
