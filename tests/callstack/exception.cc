// A C++ exception thrown three frames down and caught in work(), four
// times: the frames the unwinder leaves must go, and the costs after the
// catch belong to work() again.
#include <cstdio>
#include <stdexcept>

static volatile long sink;

__attribute__((noinline)) static void thrower(int n)
{
	sink += n;
	if (n >= 0)
		throw std::runtime_error("x");
}

__attribute__((noinline)) static void mid2(int n) { thrower(n); sink++; }
__attribute__((noinline)) static void mid1(int n) { mid2(n); sink++; }

__attribute__((noinline)) static long after_catch(long x)
{
	for (int i = 0; i < 10; i++)
		sink += x + i;
	return sink;
}

extern "C" __attribute__((noinline)) long work(void)
{
	long r = 0;

	for (int i = 0; i < 4; i++) {
		try {
			mid1(i);
		} catch (const std::exception &) {
			r += after_catch(i);
		}
	}
	return r;
}

int main()
{
	sink = work();
	std::printf("%ld\n", (long)sink);
	return 0;
}
