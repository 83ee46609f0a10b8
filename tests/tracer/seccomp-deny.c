/* seccomp-deny: run a command with some system calls refused (EPERM), as
 * a container's seccomp profile refuses them.
 *   seccomp-deny ptrace|process_vm|none[,...] COMMAND [ARGS...]
 * "process_vm" is process_vm_readv and process_vm_writev; "none" refuses
 * nothing (the same exec chain, for comparisons).  For the tests
 * of cachetrace --check and of the fallbacks it names. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long nrs[4];
	unsigned n = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: seccomp-deny ptrace|process_vm[,...] "
			"COMMAND [ARGS...]\n");
		return 2;
	}
	for (char *w = strtok(argv[1], ","); w; w = strtok(NULL, ",")) {
		if (!strcmp(w, "none")) {
			continue;
		} else if (!strcmp(w, "ptrace")) {
			nrs[n++] = SYS_ptrace;
		} else if (!strcmp(w, "process_vm")) {
			nrs[n++] = SYS_process_vm_readv;
			nrs[n++] = SYS_process_vm_writev;
		} else {
			fprintf(stderr, "seccomp-deny: unknown '%s'\n", w);
			return 2;
		}
	}
	struct sock_filter f[16];
	unsigned k = 0;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, nr));
	for (unsigned i = 0; i < n; i++) {
		/* equal: fall into the EPERM return after the other tests */
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			(unsigned)nrs[i], (unsigned char)(n - i), 0);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ERRNO | EPERM);
	struct sock_fprog prog = { .len = (unsigned short)k, .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		perror("seccomp-deny: prctl");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror("seccomp-deny: exec");
	return 127;
}
