// SPDX-License-Identifier: GPL-2.0
/*
 * A process that rewrites its own vDSO, as a debugger may (a write through
 * /proc/self/mem to the vDSO's private pages), then spends its time in it.
 * Every "clock_gettime" in the image's strings becomes "FORGE_gettime":
 * a profiler that names vDSO frames from the process's memory names them
 * after strings the process wrote, which is parsing an ELF image a user
 * made, as root.
 *
 * Usage: vdso_forge [-k] [-n CALLS] (default 2000000). It prints
 * "vdso_forge: N names changed, CALLS calls", N 0 when the write failed.
 * -k keeps the vDSO as it is (0 names changed, exit status 0).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>

static const char from[] = "clock_gettime", to[] = "FORGE_gettime";

/* The vDSO's size, from its line in /proc/self/maps. */
static size_t vdso_size(void)
{
	unsigned long start, end;
	char line[512];
	size_t size = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " [vdso]") &&
		    sscanf(line, "%lx-%lx", &start, &end) == 2)
			size = end - start;
	fclose(f);
	return size;
}

int main(int argc, char **argv)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	size_t size = vdso_size(), i;
	long calls = 2000000, n;
	struct timespec ts;
	int fd, changed = 0, keep = 0, opt;
	char *copy;

	while ((opt = getopt(argc, argv, "kn:")) != -1) {
		if (opt == 'k') {
			keep = 1;
		} else if (opt == 'n') {
			calls = atol(optarg);
		} else {
			fprintf(stderr, "usage: vdso_forge [-k] [-n CALLS]\n");
			return 2;
		}
	}
	if (!base || !size)
		return 1;
	copy = malloc(size);
	if (!copy)
		return 1;
	memcpy(copy, (void *)base, size);
	for (i = 0; !keep && i + sizeof(from) - 1 <= size; i++)
		if (!memcmp(copy + i, from, sizeof(from) - 1)) {
			memcpy(copy + i, to, sizeof(to) - 1);
			changed++;
		}
	fd = keep ? -1 : open("/proc/self/mem", O_RDWR);
	if (!keep && (fd < 0 || pwrite(fd, copy, size, base) != (ssize_t)size ||
		      memcmp((void *)base, copy, size)))
		changed = 0;
	for (n = 0; n < calls; n++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("vdso_forge: %d names changed, %ld calls\n", changed, calls);
	return changed || keep ? 0 : 1;
}
