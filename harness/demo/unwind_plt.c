// SPDX-License-Identifier: GPL-2.0
/*
 * A walk that starts in a PLT stub of a static program built with SFrame.
 *
 * In a static program, calls to glibc's IFUNCs (strlen, memcpy, ...) go
 * through .plt stubs, "jmp *GOT(%rip)", which neither the assembler's
 * .sframe nor the linker's .eh_frame describe. A uprobe on the stub that
 * caller() calls records an event in an ftrace instance with
 * userstacktrace_delay, so the deferred walk starts at the stub, with the
 * return address at the top of the stack. caller() makes the call with
 * RBP set to 1: a frame-pointer guess cannot find it. The stub's frame is
 * right only with the table eh2sframe made for the file, which describes
 * the stubs (CFA = RSP + 8).
 *
 *   unwind_plt		exit 0 when the stack is exact:
 *			[stub, after the call in caller(), caller()'s return
 *			address in main()]
 *   unwind_plt -n	exit 0 when it is not (no table loaded)
 *
 * Either way it prints the frames as "# frame N: ADDR". Exit status 1: the
 * other answer; 2: the probe could not be set up, or no deferred stack
 * started at the stub.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACEFS		"/sys/kernel/tracing"
#define INST		TRACEFS "/instances/unwind_plt"

static const char text[] = "sixteen chars...";
static unsigned long ret_in_caller, ret_in_main, stub;

/*
 * Write @len bytes of @val to @path. No strlen() here: the probe is on the
 * strlen stub, and only caller()'s call may hit it.
 */
static int write_file(const char *path, const char *val, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

#define write_str(path, lit)	write_file(path, lit, sizeof(lit) - 1)

/*
 * strlen(text) through its PLT stub, with RBP = 1 for the call. Returns the
 * length; *@ret is set to the return address of the call, *@target to the
 * stub it calls.
 */
static long __attribute__((noinline)) caller(unsigned long *ret)
{
	long len;

	ret_in_main = (unsigned long)__builtin_return_address(0);
	/*
	 * The CFI directives keep caller()'s SFrame rows right while the asm
	 * moves RSP: the walk needs them at the return address.
	 */
	asm volatile("lea 1f(%%rip), %%rax\n\t"
		     "mov %%rax, (%[ret])\n\t"
		     "push %%rbp\n\t"
		     ".cfi_adjust_cfa_offset 8\n\t"
		     "sub $8, %%rsp\n\t"
		     ".cfi_adjust_cfa_offset 8\n\t"
		     "mov $1, %%ebp\n\t"
		     "call strlen\n"
		     "1:\n\t"
		     "add $8, %%rsp\n\t"
		     ".cfi_adjust_cfa_offset -8\n\t"
		     "pop %%rbp\n\t"
		     ".cfi_adjust_cfa_offset -8"
		     : "=&a" (len)
		     : "D" (text), [ret] "r" (ret)
		     : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory",
		       "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
		       "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
		       "xmm13", "xmm14", "xmm15");
	return len;
}

/* The file offset of @addr in the executable, from /proc/self/maps. */
static long file_offset(unsigned long addr)
{
	unsigned long start, end, off;
	char line[512];
	long ret = -1;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) == 3 &&
		    addr >= start && addr < end) {
			ret = addr - start + off;
			break;
		}
	fclose(f);
	return ret;
}

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	unsigned long fr[3], after = 0;
	int n, fd, len = 0, nf = -1, exact = 0, seen = 0;
	bool want_exact = !(argc > 1 && !strcmp(argv[1], "-n"));
	char exe[256], cmd[512], *line, *save;
	const unsigned char *p;
	ssize_t el;
	int32_t rel;

	/* Unprobed first: the return address, and the stub from the call. */
	if (caller(&after) != (long)strlen(text))
		return 2;
	ret_in_caller = after;
	p = (const unsigned char *)after - 5;
	if (p[0] != 0xe8)
		return 2;
	memcpy(&rel, p + 1, sizeof(rel));
	stub = after + rel;
	p = (const unsigned char *)stub;
	/* The stub is "jmp *GOT(%rip)": no frame of its own. */
	if (p[0] != 0xff || p[1] != 0x25) {
		printf("# %#lx is not a PLT stub\n", stub);
		return 2;
	}

	el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (el <= 0)
		return 2;
	exe[el] = '\0';
	mkdir(INST, 0755);
	el = snprintf(cmd, sizeof(cmd), "p:unwind_plt/stub %s:0x%lx\n", exe,
		      file_offset(stub));
	if (write_file(TRACEFS "/uprobe_events", cmd, el) ||
	    write_str(INST "/options/userstacktrace_delay", "1") ||
	    write_str(INST "/events/unwind_plt/enable", "1")) {
		printf("# cannot set up the probe: %s", cmd);
		n = 2;
		goto out;
	}
	caller(&after);
	write_str(INST "/events/unwind_plt/enable", "0");

	fd = open(INST "/trace", O_RDONLY);
	while (fd >= 0 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	if (fd >= 0)
		close(fd);
	buf[len] = '\0';
	/* The stack that starts at the stub: exact when its next frames are. */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "<user unwind stack>")) {
			nf = 0;
			continue;
		}
		if (nf < 0 || strncmp(line, " => ", 4)) {
			nf = -1;
			continue;
		}
		if (nf < 3)
			fr[nf] = strtoul(line + 4, NULL, 16);
		printf("# frame %d: %s\n", nf, line + 4);
		nf++;
		if (nf == 1 && fr[0] == stub)
			seen = 1;
		if (nf == 3 && fr[0] == stub)
			exact = fr[1] == ret_in_caller && fr[2] == ret_in_main;
	}
	printf("# stub %#lx, want %#lx then %#lx\n", stub, ret_in_caller, ret_in_main);
	n = !seen ? 2 : exact == want_exact ? 0 : 1;
out:
	write_str(INST "/options/userstacktrace_delay", "0");
	rmdir(INST);
	write_str(TRACEFS "/uprobe_events", "-:unwind_plt/stub\n");
	return n;
}
