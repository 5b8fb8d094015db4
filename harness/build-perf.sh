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
# BUILD_BPF_SKEL=1: perf's BPF programs (--off-cpu, which takes deferred
# user stacks with --call-graph fp,defer), compiled by clang-14 against
# perf's own small vmlinux.h, with the libbpf and the bootstrap bpftool
# perf builds from the tree (about a minute more of a build).
. "$(dirname "$0")/lib.sh"

out=$BUILD/perf
mkdir -p "$out"
flags=(
	LDFLAGS=-static WERROR=1
	NO_LIBPYTHON=1 NO_LIBPERL=1 BUILD_BPF_SKEL=1 CLANG=clang-14
	NO_SLANG=1 NO_GTK2=1 NO_LIBUNWIND=1 NO_LIBNUMA=1 NO_LIBAUDIT=1
	NO_LIBCRYPTO=1 NO_LIBBABELTRACE=1 NO_CAPSTONE=1 NO_LIBCAP=1 NO_SDT=1
	NO_JVMTI=1 NO_LIBPFM4=1 NO_LIBDEBUGINFOD=1 NO_SHELLCHECK=1 NO_LIBLLVM=1
	NO_JEVENTS=1
)
# Only the perf binary: the dlfilter plugins do not link with -static.
if ! make -C "$SRC/tools/perf" O="$out" CC="$KCC" -j"$JOBS" "${flags[@]}" \
	"$out/perf" >"$out/build.log" 2>&1; then
	grep -E 'error|Error' "$out/build.log" | head -20 >&2
	die "perf build failed (see $out/build.log)"
fi
grep -q 'libdw-dwarf-unwind:.*on' "$out/build.log" ||
	log "note: perf built without libdw (no --call-graph dwarf)"
"$out/perf" version --build-options | grep -q 'bpf_skeletons:.*on' ||
	die "perf built without its BPF skeletons (no --off-cpu; see $out/build.log)"
log "perf: $out/perf"
