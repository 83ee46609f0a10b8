/* A thread made inside a window (tests/attach/threads.sh): it prints
 * its own Cpus_allowed_list once the window is over.  Its creator was
 * pinned to the tracer's CPU for the window; it must not keep that pin
 * (it did: a server's thread left on one CPU). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
static volatile int go;
static volatile pid_t tid;
static void *body(void *a) { tid = syscall(SYS_gettid); while (!go) usleep(1000); return a; }
static pthread_t th;
__attribute__((noinline)) int work(void) { pthread_create(&th, NULL, body, NULL); while (!tid) ; return 1; }
int main(void)
{
	work();
	usleep(200000);
	char p[64], line[256]; snprintf(p, sizeof p, "/proc/self/task/%d/status", tid);
	FILE *f = fopen(p, "r");
	while (fgets(line, sizeof line, f)) if (!strncmp(line, "Cpus_allowed_list", 17)) fputs(line, stdout);
	go = 1; pthread_join(th, NULL);
	return 0;
}
