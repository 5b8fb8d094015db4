#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the patched tree's perf tool statically, for the initramfs, into
# $BUILD/perf/perf. Feature set: as light as possible while keeping symbol
# resolution (libelf) and --call-graph dwarf (libdw), which the main job
# compares against fp,defer, and libtraceevent for tracepoint events such
# as unwind:unwind_user_context. WERROR=1: a compiler warning fails the build;
# the linker's notes about glibc functions in static programs remain.
# NO_JEVENTS=1: no tables of the CPUs' hardware events, which a guest under
# TCG has none of (its samples are cpu-clock's); their generated source was
# the longest compile of a cold build.
# A second perf, $BUILD/perf-bpf/perf, has its BPF skeletons
# (BUILD_BPF_SKEL=1: perf record --off-cpu, which takes deferred user
# stacks with --call-graph fp,defer), compiled by clang-14 against perf's
# own small vmlinux.h, with the libbpf and the bootstrap bpftool perf
# builds from the tree. Only bpf_prof's off-CPU checks run it. A perf with
# libbpf ended every "perf record" up to a second late, in its BPF
# side-band thread's poll, until step 89; with step 89 it is still slower
# in the test job (eh_tables alone on the test kernel, two boots side by
# side on 2026-11-29: 114 s with the perf without libbpf, over 240 s with
# it), for reasons not yet found, so the tests keep the perf without it.
. "$(dirname "$0")/lib.sh"

out=$BUILD/perf
flags=(
	LDFLAGS=-static WERROR=1
	NO_LIBPYTHON=1 NO_LIBPERL=1
	NO_SLANG=1 NO_GTK2=1 NO_LIBUNWIND=1 NO_LIBNUMA=1 NO_LIBAUDIT=1
	NO_LIBCRYPTO=1 NO_LIBBABELTRACE=1 NO_CAPSTONE=1 NO_LIBCAP=1 NO_SDT=1
	NO_JVMTI=1 NO_LIBPFM4=1 NO_LIBDEBUGINFOD=1 NO_SHELLCHECK=1 NO_LIBLLVM=1
	NO_JEVENTS=1
)
# build_perf DIR [FLAGS...]: only the perf binary (the dlfilter plugins do
# not link with -static), into DIR.
build_perf() {
	local o=$1
	shift
	mkdir -p "$o"
	if ! make -C "$SRC/tools/perf" O="$o" CC="$KCC" -j"$JOBS" "${flags[@]}" \
		"$@" "$o/perf" >"$o/build.log" 2>&1; then
		grep -E 'error|Error' "$o/build.log" | head -20 >&2
		die "perf build failed (see $o/build.log)"
	fi
}
build_perf "$out" BUILD_BPF_SKEL=0 NO_LIBBPF=1
grep -q 'libdw-dwarf-unwind:.*on' "$out/build.log" ||
	log "note: perf built without libdw (no --call-graph dwarf)"
log "perf: $out/perf"
build_perf "$BUILD/perf-bpf" BUILD_BPF_SKEL=1 CLANG=clang-14
"$BUILD/perf-bpf/perf" version --build-options | grep -q 'bpf_skeletons:.*on' ||
	die "perf built without its BPF skeletons (see $BUILD/perf-bpf/build.log)"
log "perf with BPF skeletons: $BUILD/perf-bpf/perf"
