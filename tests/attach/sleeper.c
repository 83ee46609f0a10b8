/* A target that waits in one system call: prints "waiting", sleeps
 * ARGV[1] seconds in nanosleep, prints "done" (tests/attach/blocked.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec ts = { argc > 1 ? atoi(argv[1]) : 3, 0 };
	printf("waiting\n");
	fflush(stdout);
	nanosleep(&ts, NULL);
	printf("done\n");
	return 0;
}
