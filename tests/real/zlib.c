/* real-pkg: zlib
 * Real-library driver: zlib (Debian's zlib1g).  work() compresses 4 KiB
 * of text with deflate and inflates it back.  With the argument "0" main
 * skips work() (the baseline run of real.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static unsigned char in[4096], packed[8192], out[4096];

__attribute__((noinline)) static void work(void)
{
	uLongf plen = sizeof packed, olen = sizeof out;

	if (compress2(packed, &plen, in, sizeof in, 6) != Z_OK)
		exit(2);
	if (uncompress(out, &olen, packed, plen) != Z_OK || olen != sizeof in)
		exit(3);
}

int main(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof in; i++)	/* text-like: words repeat */
		in[i] = "the quick brown fox jumps over a lazy dog "[(i * 7 + i / 53) % 42];
	if (argc < 2 || argv[1][0] != '0')
		work();
	printf("%d\n", memcmp(in, out, sizeof in) == 0);
	return 0;
}
