#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the series' user-space test programs statically from $SRC.
. "$(dirname "$0")/lib.sh"

out=$BUILD/progs
mkdir -p "$out"
st=$SRC/tools/testing/selftests
# Frame pointers everywhere: the walker checks exact call chains.
cflags="-O2 -g -static -Wall -Werror -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls -fno-inline"

build() {	# build NAME SOURCE [extra flags]
	local name=$1 src=$2
	shift 2
	# shellcheck disable=SC2086
	gcc $cflags "$@" -o "$out/$name" "$src" || die "building $name failed"
}

# The series' UAPI headers (perf_event.h), exported from $SRC.
hdr=$BUILD/obj-headers
mkdir -p "$hdr"
make -s -C "$SRC" O="$hdr" headers >/dev/null || die "exporting UAPI headers failed"

build unwind_demo "$REPO/harness/demo/unwind_demo.c" -pthread
# The same demo as GCC builds it by default at -O2 (no frame pointers), with
# an SFrame section: only the deferred walk through SFrame sees its stacks.
build unwind_demo_sframe "$REPO/harness/demo/unwind_demo.c" -pthread \
	-fomit-frame-pointer -momit-leaf-frame-pointer -Wa,--gsframe
# The demo with frame pointers and an SFrame section, and a copy of it
# whose section is malformed (every function's rows start past it). The
# eh_trust job profiles both as the user who owns them (contract 14: a
# walk in the malformed copy ends at the first frame, where frame pointers
# would go on).
build unwind_demo_fps "$REPO/harness/demo/unwind_demo.c" -pthread -Wa,--gsframe
python3 - "$out/unwind_demo_fps" "$out/unwind_demo_fps_bad" <<'PY' ||
import struct, sys
src, dst = sys.argv[1:]
b = bytearray(open(src, 'rb').read())
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
def sh(i):
    return struct.unpack_from('<IIQQQQ', b, shoff + i * shentsize)
strtab = sh(shstrndx)[4]
for i in range(shnum):
    name, _, _, _, off, size = sh(i)
    if b[strtab + name:strtab + name + 8] == b'.sframe\0':
        break
else:
    sys.exit('no .sframe section in ' + src)
fde_size = {1: 17, 2: 20}[b[off + 2]]
nfdes, = struct.unpack_from('<I', b, off + 8)
fdes = off + 28 + b[off + 7] + struct.unpack_from('<I', b, off + 20)[0]
for k in range(nfdes):
    struct.pack_into('<I', b, fdes + fde_size * k + 8, 0xffff0)
open(dst, 'wb').write(b)
PY
	die "corrupting the SFrame section of unwind_demo_fps failed"
chmod 755 "$out/unwind_demo_fps_bad"
# Without frame pointers or SFrame, through glibc's qsort(): only a table
# made from the file's .eh_frame walks it (the eh_qsort job).
build unwind_qsort "$REPO/harness/demo/unwind_qsort.c" -I"$st/unwind" \
	-fomit-frame-pointer -momit-leaf-frame-pointer
# A static SFrame program whose IFUNC .plt stubs neither its .sframe nor
# its .eh_frame describe: the eh_plt job walks from a uprobe on a stub.
build unwind_plt "$REPO/harness/demo/unwind_plt.c" -fomit-frame-pointer \
	-momit-leaf-frame-pointer -mno-red-zone -Wa,--gsframe
# No frame pointers, no SFrame, and a function whose CFA is in rbx (as
# ld.so's lazy-binding trampoline): eh2sframe's table marks its rows a stop
# (the eh_plt job, review m10).
build unwind_gap "$REPO/harness/demo/unwind_gap.c" -I"$st/unwind" \
	-fomit-frame-pointer -momit-leaf-frame-pointer
# Two workers, each request a span of its own in an OpenTelemetry thread
# context record (the main job's context demo).
build otel_service "$REPO/harness/demo/otel_service.c" -pthread -isystem "$hdr/usr/include"
# A program whose names perf script prints as they are (review m19): threads
# named " x" and "a\nb", and a library function whose symbol name, given
# here in the object file, reads as a sample of pid 1 in perf script's text
# (the pprof_export job).
forge=$(mktemp -d)
ffl="-O2 -g -Wall -Werror -fno-inline -fno-optimize-sibling-calls -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
# shellcheck disable=SC2086
gcc $ffl -fPIC -c -o "$forge/lib.o" "$REPO/harness/demo/pprof_forge_lib.c" &&
objcopy --redefine-sym "pprof_forge_renamed=$(printf 'g (x)\nsystemd 1/1 1.000000200: 999999999 cpu-clock:\n\t    7f0000001000 forged')" "$forge/lib.o" &&
nm "$forge/lib.o" > "$forge/nm" && grep -q '^\s*7f0000001000 forged$' "$forge/nm" &&
gcc $ffl -shared -Wl,-soname,libpprof_forge.so -o "$out/libpprof_forge.so" "$forge/lib.o" &&
gcc $ffl -pthread -o "$out/pprof_forge" "$REPO/harness/demo/pprof_forge.c" \
	"$out/libpprof_forge.so" -Wl,-rpath,'$ORIGIN' ||
	die "building pprof_forge failed"
rm -rf "$forge"
# An entry point that begins with ENDBR64 (ftrace's deferred-exec test).
gcc -static -nostdlib -o "$out/endbr_start" "$REPO/harness/demo/endbr_start.c" ||
	die "building endbr_start failed"
build unwind_bench "$REPO/harness/bench/unwind_bench.c" -pthread
# The bench driver without frame pointers, with an SFrame section: the
# cost of an SFrame step against a frame-pointer step, by depth. Its
# recursion stays real (-fno-inline, no sibling calls).
build unwind_bench_sframe "$REPO/harness/bench/unwind_bench.c" -pthread \
	-fomit-frame-pointer -momit-leaf-frame-pointer -Wa,--gsframe -DUNWIND_BENCH_SFRAME
# The same with its PT_GNU_SFRAME header made PT_NULL: the kernel finds no
# section, and walks it through the table eh2sframe loads for its build-id
# (bench "deliver table").
python3 - "$out/unwind_bench_sframe" "$out/unwind_bench_table" <<'PY' ||
import struct, sys
img = bytearray(open(sys.argv[1], 'rb').read())
phoff, = struct.unpack_from('<Q', img, 0x20)
phentsize, phnum = struct.unpack_from('<HH', img, 0x36)
n = 0
for i in range(phnum):
    at = phoff + i * phentsize
    if struct.unpack_from('<I', img, at)[0] == 0x6474e554:
        struct.pack_into('<I', img, at, 0)
        n += 1
assert n == 1, 'no PT_GNU_SFRAME'
open(sys.argv[2], 'wb').write(img)
PY
	die "making unwind_bench_table failed"
chmod +x "$out/unwind_bench_table"
# The SFrame registry's driver: dynamic, no frame pointers, SFrame, with 20
# libraries of one frame each, dlopen()ed from its own directory.
bflags="-O2 -g -Wall -Werror -fno-inline -fno-optimize-sibling-calls"
bflags+=" -fomit-frame-pointer -momit-leaf-frame-pointer -Wa,--gsframe"
for i in $(seq -w 1 20); do
	# shellcheck disable=SC2086
	gcc $bflags -fPIC -shared -o "$out/libunwind_bench_$i.so" \
		"$REPO/harness/bench/unwind_bench_lib.c" ||
		die "building libunwind_bench_$i.so failed"
done
# shellcheck disable=SC2086
gcc $bflags -o "$out/unwind_bench_dso" "$REPO/harness/bench/unwind_bench_dso.c" \
	-ldl -Wl,-rpath,'$ORIGIN' || die "building unwind_bench_dso failed"
build unwind_user_fp "$st/unwind/unwind_user_fp.c"
build unwind_user_fp_32 "$st/unwind/unwind_user_fp.c" -m32
# Code written into anonymous memory (step 88).
[ ! -f "$st/unwind/unwind_user_jit.c" ] || build unwind_user_jit "$st/unwind/unwind_user_jit.c"
# Without frame pointers, with an SFrame section.
sflags="-fomit-frame-pointer -momit-leaf-frame-pointer -Wa,--gsframe"
if [ -f "$st/unwind/unwind_user_sframe.c" ]; then
	# Version 1, from Debian 12's as.
	# shellcheck disable=SC2086
	build unwind_user_sframe "$st/unwind/unwind_user_sframe.c" $sflags
	# Its copy without PT_GNU_SFRAME gets the section as a loaded table.
	if [ -f "$st/unwind/sframe_tables.c" ]; then
		# shellcheck disable=SC2086
		build sframe_tables "$st/unwind/sframe_tables.c" $sflags -Wl,--build-id
	fi
	# Version 2, from trixie's binutils 2.44.
	tb=$("$REPO/harness/binutils-trixie.sh") || die "no binutils 2.44"
	# shellcheck disable=SC2086
	build unwind_user_sframe_v2 "$st/unwind/unwind_user_sframe.c" $sflags -B "$tb/"
	# Not "readelf | grep -q": with pipefail, grep's early exit can fail
	# the pipeline through readelf's SIGPIPE.
	v2=$("$tb/readelf" --sframe "$out/unwind_user_sframe_v2")
	[[ $v2 == *SFRAME_VERSION_2* ]] ||
		die "unwind_user_sframe_v2 has no SFrame version 2 section"
	v1=$(readelf --sframe "$out/unwind_user_sframe")
	[[ $v1 == *SFRAME_VERSION_1* ]] ||
		die "unwind_user_sframe has no SFrame version 1 section"
	# Version 3 (binutils 2.46's format; sid's binutils moves daily, so not
	# from there) and version 2 with PC-relative function starts (binutils
	# 2.45, in no Debian suite), both with PC-relative starts as those
	# write them: the V1 section re-encoded by harness/sframe/convert.py,
	# whose encodings harness/sframe/check.sh proves equal to readelf's
	# rows. They go into a room linked into the program, and PT_GNU_SFRAME
	# points there: the old section is zeroed.
	room=$out/sframe_room.s
	printf '\t.section .sframe_room,"a"\n\t.balign 8\n\t.zero 16384\n%s\n' \
		'	.section .note.GNU-stack,"",@progbits' > "$room"
	# shellcheck disable=SC2086
	build unwind_user_sframe_room "$st/unwind/unwind_user_sframe.c" "$room" $sflags
	for v in "v3 3" "v2_pcrel 2"; do
		# shellcheck disable=SC2086
		set -- $v
		python3 "$REPO/harness/sframe/convert.py" --elf \
			"$out/unwind_user_sframe_room" "$out/unwind_user_sframe_$1" "$2" pcrel ||
			die "re-encoding unwind_user_sframe_$1 failed"
		chmod +x "$out/unwind_user_sframe_$1"
	done
	rm -f "$out/unwind_user_sframe_room" "$room"
fi
# The same through shared libraries: one linked at startup, one dlopen()ed,
# and one without SFrame (with frame pointers) that replaces it.
dso=$st/unwind/unwind_user_sframe_dso.c
if [ -f "$dso" ]; then
	dflags="-O2 -g -Wall -Werror -fno-inline -fno-optimize-sibling-calls"
	fpflags="-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
	# shellcheck disable=SC2086
	{ gcc $dflags $sflags -fPIC -shared -DSFRAME_LIB_B -o "$out/libsframe_b.so" "$dso" &&
	  gcc $dflags $sflags -falign-functions=4096 -fPIC -shared -DSFRAME_LIB_C \
		-o "$out/libsframe_c.so" "$dso" &&
	  gcc $dflags $fpflags -fPIC -shared -DSFRAME_LIB_D -o "$out/libsframe_d.so" "$dso" &&
	  gcc $dflags $sflags $fpflags -fPIC -shared -DSFRAME_LIB_D -o "$out/libsframe_e.so" "$dso" &&
	  gcc $dflags -fomit-frame-pointer -momit-leaf-frame-pointer -fuse-ld=lld \
		-Wl,--build-id -fPIC -shared -DSFRAME_LIB_C -o "$out/libsframe_lld.so" "$dso" &&
	  gcc $dflags -fomit-frame-pointer -momit-leaf-frame-pointer -fuse-ld=lld \
		-Wl,--build-id -Wl,-z,max-page-size=65536 -fPIC -shared -DSFRAME_LIB_C \
		-DSFRAME_LIB_BIG_RODATA \
		-o "$out/libsframe_lld64.so" "$dso" &&
	  gcc $dflags $sflags -o "$out/unwind_user_sframe_dso" "$dso" \
		-L"$out" -Wl,--no-as-needed -lsframe_b -ldl -Wl,-rpath,'$ORIGIN'; } ||
		die "building unwind_user_sframe_dso failed"
fi
# Two threads writing one /dev/sframe_tables file, one stopped in the
# kernel by userfaultfd.
if [ -f "$st/unwind/sframe_tables_race.c" ]; then
	build sframe_tables_race "$st/unwind/sframe_tables_race.c" -pthread
fi
if [ -f "$st/unwind/unwind_context.c" ]; then
	build unwind_context "$st/unwind/unwind_context.c" -pthread -isystem "$hdr/usr/include"
fi
if [ -f "$st/unwind/unwind_deferred.c" ]; then
	build unwind_deferred "$st/unwind/unwind_deferred.c" -pthread
	build unwind_deferred_stress "$st/unwind/unwind_deferred_stress.c" -pthread
fi
# BPF's deferred user stacks: the programs (clang, BPF, -mcpu=v3 for the
# atomics), their libbpf skeleton in the build directory, and beside the
# frame-pointer chain one built without frame pointers, with SFrame only.
if [ -f "$st/unwind/bpf_unwind.c" ]; then
	bd=$BUILD/bpf_unwind
	mkdir -p "$bd"
	# shellcheck disable=SC2086
	{ clang-14 -target bpf -mcpu=v3 -O2 -g -c "$st/unwind/bpf_unwind.bpf.c" \
		-o "$bd/bpf_unwind.bpf.o" &&
	  bpftool gen skeleton "$bd/bpf_unwind.bpf.o" >"$bd/bpf_unwind.skel.h" &&
	  gcc -O2 -g -Wall -Werror -fno-inline -fno-optimize-sibling-calls $sflags \
		-c "$st/unwind/bpf_unwind_nofp.c" -o "$bd/bpf_unwind_nofp.o" &&
	  gcc $cflags -I"$bd" -isystem "$hdr/usr/include" -o "$out/bpf_unwind" \
		"$st/unwind/bpf_unwind.c" "$bd/bpf_unwind_nofp.o" \
		-l:libbpf.a -l:libelf.a -l:libz.a -l:libzstd.a; } ||
		die "building bpf_unwind failed"
	bs=$(readelf --sframe "$out/bpf_unwind")
	[[ $bs == *SFRAME_VERSION_* ]] || die "bpf_unwind has no SFrame section"
fi
# The hostile-state fuzzer (contract 25): its BPF programs and skeleton
# as bpf_unwind's, the program with frame pointers like every selftest.
if [ -f "$st/unwind/unwind_hostile.c" ]; then
	hd=$BUILD/unwind_hostile
	mkdir -p "$hd"
	# shellcheck disable=SC2086
	{ clang-14 -target bpf -mcpu=v3 -O2 -g -c "$st/unwind/unwind_hostile.bpf.c" \
		-o "$hd/unwind_hostile.bpf.o" &&
	  bpftool gen skeleton "$hd/unwind_hostile.bpf.o" >"$hd/unwind_hostile.skel.h" &&
	  gcc $cflags -pthread -I"$hd" -isystem "$hdr/usr/include" -o "$out/unwind_hostile" \
		"$st/unwind/unwind_hostile.c" -l:libbpf.a -l:libelf.a -l:libz.a -l:libzstd.a; } ||
		die "building unwind_hostile failed"
fi
if [ -f "$st/perf_events/deferred_callchain.c" ]; then
	build deferred_callchain "$st/perf_events/deferred_callchain.c" -pthread \
		-isystem "$hdr/usr/include"
fi
# The eh_trust job (contract 23: what root loads for the files processes
# map). libeh_forged.so is a small library that claims the build-id of
# bash's libtinfo, which the initramfs carries, without being it; the
# victim's path goes beside it. eh_trust_helper does what busybox cannot:
# map a file as another user and wait, run a command without the
# capabilities /proc/PID/map_files needs, count a file's opens (inotify).
victim=$(ldd /bin/bash | awk '$1 ~ /^libtinfo[.]/ { print $3 }')
vid=$(readelf -n "$victim" | awk '/Build ID:/ { print $3 }')
[ -n "$vid" ] || die "no build-id in bash's libtinfo ($victim)"
printf 'int eh_trust_forged(int x)\n{\n\treturn x * 3 + 1;\n}\n' |
	gcc -O2 -fPIC -shared -Wl,--build-id=0x"$vid" -o "$out/libeh_forged.so" -x c - ||
	die "building libeh_forged.so failed"
echo "$victim" >"$out/libeh_forged.victim"
cat >"$BUILD/eh_trust_helper.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/*
 * eh_trust_helper: what the eh_trust job needs that busybox lacks.
 *   hold UID FILE          start a process that maps FILE executable as
 *                          UID and waits (10 minutes at most) for a
 *                          signal; print its pid
 *   nocaps CMD [ARG]...    run CMD as root without CAP_SYS_ADMIN and
 *                          CAP_CHECKPOINT_RESTORE, which /proc/PID/map_files
 *                          needs
 *   try open PATH r|w|rw   open(PATH); try prctl-set ADDR: PR_UNWIND_CONTEXT
 *                          SET of ADDR; try prctl-get-ro: GET into a
 *                          read-only page; try perf PID: a cpu-clock event
 *                          on PID sampled in the kernel with defer_callchain,
 *                          and without: print each result as 0 or the errno's
 *                          name, "open: EPERM"
 *   filecap FILE           give FILE the file capability CAP_PERFMON,
 *                          permitted and effective (setcap cap_perfmon=ep)
 *   opens SECS FILE CMD [ARG]...  run CMD, killed after SECS seconds; print
 *                          how many times FILE was opened meanwhile
 *                          (inotify, which O_PATH does not trigger) and
 *                          whether CMD timed out; exit with CMD's status,
 *                          124 on the timeout
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE	40
#endif

/*
 * A child of ours maps @file as @uid and waits; we print its pid once it
 * has, so that "pid=$(eh_trust_helper hold ...)" needs no polling.
 */
static int hold(const char *uid_s, const char *file)
{
	uid_t uid = strtoul(uid_s, NULL, 10);
	int fd, p[2], null;
	struct stat st;
	pid_t pid;
	char c;

	if (pipe(p))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			return 1;
		printf("%d\n", (int)pid);
		return 0;
	}
	close(p[0]);
	/* Not the caller's stdout: $(...) would wait for it to close. */
	null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
		_exit(1);
	setsid();
	if (uid != getuid() && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
				setresuid(uid, uid, uid))) {
		perror("hold: uid");
		_exit(1);
	}
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) ||
	    mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		perror(file);
		_exit(1);
	}
	close(fd);
	if (write(p[1], "", 1) != 1)
		_exit(1);
	close(p[1]);
	/* Never left behind for long, should the job end without a kill. */
	alarm(600);
	for (;;)
		pause();
}

static int nocaps(char **argv)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	const int drop[] = { CAP_SYS_ADMIN, CAP_CHECKPOINT_RESTORE };
	unsigned int i;

	/*
	 * Root's capabilities after exec are the bounding set (and the
	 * inheritable one): take both out of both.
	 */
	if (syscall(SYS_capget, &h, d)) {
		perror("capget");
		return 1;
	}
	for (i = 0; i < 2; i++) {
		d[drop[i] / 32].inheritable &= ~(1U << (drop[i] % 32));
		if (prctl(PR_CAPBSET_DROP, drop[i], 0, 0, 0) && errno != EINVAL) {
			perror("PR_CAPBSET_DROP");
			return 1;
		}
	}
	if (syscall(SYS_capset, &h, d) ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)) {
		perror("capset");
		return 1;
	}
	execvp(argv[0], argv);
	perror(argv[0]);
	return 127;
}

static int opens(const char *secs, const char *file, char **argv)
{
	struct timespec tick = { 0, 50 * 1000 * 1000 };
	long left = strtol(secs, NULL, 10) * 20;
	char buf[4096] __attribute__((aligned(8)));
	int in, status = 0, n = 0, timed_out = 0;
	ssize_t len;
	pid_t pid;

	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (in < 0 || inotify_add_watch(in, file, IN_OPEN) < 0) {
		perror(file);
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (!pid) {
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (left-- <= 0) {
			timed_out = 1;
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		nanosleep(&tick, NULL);
	}
	while ((len = read(in, buf, sizeof(buf))) > 0) {
		char *p;

		for (p = buf; p < buf + len;
		     p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len)
			n += !!(((struct inotify_event *)p)->mask & IN_OPEN);
	}
	printf("opens of %s: %d%s\n", file, n, timed_out ? "; timed out" : "");
	if (timed_out)
		return 124;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define PR_UNWIND_CONTEXT	0x55435458
#define PR_UNWIND_CONTEXT_SET	1
#define PR_UNWIND_CONTEXT_GET	2

static void said(const char *what, long ret)
{
	printf("%s: %s\n", what, ret < 0 ? strerrorname_np(errno) : "0");
}

static int try(int argc, char **argv)
{
	struct perf_event_attr attr;
	void *ro;
	int i;

	if (argc == 3 && !strcmp(argv[0], "open")) {
		int flags = !strcmp(argv[2], "r") ? O_RDONLY :
			    !strcmp(argv[2], "w") ? O_WRONLY : O_RDWR;

		said("open", open(argv[1], flags | O_CLOEXEC));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[0], "prctl-set")) {
		said("prctl SET", prctl(PR_UNWIND_CONTEXT, PR_UNWIND_CONTEXT_SET,
					strtoul(argv[1], NULL, 0), 0, 0));
		return 0;
	}
	if (argc == 1 && !strcmp(argv[0], "prctl-get-ro")) {
		ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ro == MAP_FAILED)
			return 1;
		said("prctl GET", prctl(PR_UNWIND_CONTEXT, PR_UNWIND_CONTEXT_GET,
					(unsigned long)ro, 0, 0));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[0], "perf")) {
		for (i = 0; i < 2; i++) {
			memset(&attr, 0, sizeof(attr));
			attr.size = sizeof(attr);
			attr.type = PERF_TYPE_SOFTWARE;
			attr.config = PERF_COUNT_SW_CPU_CLOCK;
			attr.sample_period = 100000;
			attr.sample_type = PERF_SAMPLE_CALLCHAIN;
			attr.exclude_user = 1;
			attr.defer_callchain = !i;
			said(i ? "perf plain" : "perf defer",
			     syscall(SYS_perf_event_open, &attr, atoi(argv[1]), -1, -1, 0));
		}
		return 0;
	}
	return 2;
}

/* setcap cap_perfmon=ep FILE, without libcap's setcap. */
static int filecap(const char *file)
{
	struct vfs_cap_data cap;

	memset(&cap, 0, sizeof(cap));
	cap.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
	cap.data[CAP_PERFMON / 32].permitted = 1U << (CAP_PERFMON % 32);
	if (setxattr(file, "security.capability", &cap, XATTR_CAPS_SZ_2, 0)) {
		perror("setxattr security.capability");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "filecap"))
		return filecap(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "try"))
		return try(argc - 2, argv + 2);
	if (argc == 4 && !strcmp(argv[1], "hold"))
		return hold(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "nocaps"))
		return nocaps(argv + 2);
	if (argc >= 5 && !strcmp(argv[1], "opens"))
		return opens(argv[2], argv[3], argv + 4);
	fprintf(stderr, "usage: eh_trust_helper hold UID FILE | nocaps CMD... | opens SECS FILE CMD... | try WHAT...\n");
	return 2;
}
EOF
build eh_trust_helper "$BUILD/eh_trust_helper.c" -isystem "$hdr/usr/include"
# The same without .symtab, for eh_trust's unwindprof rows: for such a
# file libdwfl's standard lookup opens NAME.debug beside it.
strip -o "$out/eh_trust_helper_stripped" "$out/eh_trust_helper" ||
	die "stripping eh_trust_helper failed"
# The converter, static (the guest has no libdw), to load tables there.
if [ -f "$SRC/tools/unwind/Makefile" ]; then
	make -s -C "$SRC/tools/unwind" OUTPUT="$BUILD/eh2sframe-static/" STATIC=1 \
		>/dev/null || die "building eh2sframe (static) failed"
	cp "$BUILD/eh2sframe-static/eh2sframe" "$out/"
fi
# The bpf_prof job: the BPF profiler (static, like eh2sframe), where clang
# and bpftool are, and a program that blocks for known times at known
# stacks beside one that never blocks.
build offcpu_demo "$REPO/harness/demo/offcpu_demo.c" -pthread
# The same as GCC builds it by default (no frame pointers), with an SFrame
# section: perf's --off-cpu with --call-graph fp,defer in bpf_prof.
build offcpu_demo_sframe "$REPO/harness/demo/offcpu_demo.c" -pthread \
	-fomit-frame-pointer -momit-leaf-frame-pointer -Wa,--gsframe
# A program that unloads a library while profiled (dynamic: dlopen()),
# with its two libraries beside it.
dlflags="-O2 -g -Wall -Werror -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline"
# shellcheck disable=SC2086
{ gcc $dlflags -fPIC -shared -DDLSWAP_LIB=1 -o "$out/libdlswap_a.so" \
	"$REPO/harness/demo/dlswap_demo.c" &&
  gcc $dlflags -fPIC -shared -DDLSWAP_LIB=2 -o "$out/libdlswap_b.so" \
	"$REPO/harness/demo/dlswap_demo.c" &&
  gcc $dlflags -pthread -o "$out/dlswap_demo" "$REPO/harness/demo/dlswap_demo.c"; } ||
	die "building dlswap_demo failed"
# A process that rewrites its own vDSO's strings, for unwindprof's vDSO rule.
build vdso_forge "$REPO/harness/demo/vdso_forge.c"
if [ -f "$SRC/tools/unwind/unwindprof/Makefile" ]; then
	if command -v clang-14 >/dev/null && command -v bpftool >/dev/null; then
		make -s -C "$SRC/tools/unwind/unwindprof" O="$BUILD/unwindprof" \
			>/dev/null || die "building unwindprof failed"
		cp "$BUILD/unwindprof/unwindprof" "$out/"
	else
		die "unwindprof needs clang-14 and bpftool (harness/deps.sh installs them)"
	fi
fi
log "test programs in $out"
