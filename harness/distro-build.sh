#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Compile every object the series adds or changes, at W=1, under
# configurations other than the harness's tinyconfig-based ones:
#   amd64: Debian's own 6.12 amd64 configuration (package linux-config-6.12)
#          with the series' options a distribution would turn on (the
#          production options are selected by PERF_EVENTS and TRACING; the
#          KUnit tests as modules, with KUNIT=m)
#   i386:  make ARCH=i386 defconfig with the same options: everything of the
#          series is 64-bit only (HAVE_UNWIND_USER_FP if X86_64), so it must
#          stay off without a Kconfig warning, and the base files the series
#          patches must compile without it.
#   distro-build.sh [amd64] [i386]		(default: both)
# Needs $SRC from harness/prepare.sh. One output directory per configuration,
# $BUILD/obj-distro-amd64 and $BUILD/obj-distro-i386; logs in $BUILD/logs/.
# Prints, per configuration, PASS/FAIL distro.CFG.kconfig (no warning from
# olddefconfig, such as "unmet direct dependencies", and the options came out
# as intended) and distro.CFG.build (no error, and no warning at W=1 that the
# pristine base does not give too: objects that warn are compiled again from
# the base, $BUILD/src-base, with the same configuration; such base warnings
# are printed as NOTE lines). Exit status 1 if anything failed.
. "$(dirname "$0")/lib.sh"

[ -d "$SRC/.git" ] || die "no $SRC: run harness/prepare.sh first"
cfgs=${*:-amd64 i386}
logs=$BUILD/logs
mkdir -p "$logs"

# Debian's configurations of its 6.12 kernels; the one of the base's version
# if the registry still has it.
DISTRO_CONFIG=/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
if [[ " $cfgs " == *" amd64 "* ]] && [ ! -f "$DISTRO_CONFIG" ]; then
	export DEBIAN_FRONTEND=noninteractive
	want=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
	log "installing linux-config-6.12 ${want}"
	apt-get update -qq
	apt-get install -y -qq "linux-config-6.12=$want" >/dev/null 2>&1 ||
		apt-get install -y -qq linux-config-6.12 >/dev/null
	[ -f "$DISTRO_CONFIG" ] || die "linux-config-6.12 ships no $DISTRO_CONFIG"
fi

# The series' options a distribution would turn on. UNWIND_USER and
# UNWIND_DEFERRED have no prompt (PERF_EVENTS and TRACING select them);
# UNWIND_USER_SFRAME defaults to y. The test and benchmark clients
# (UNWIND_TEST_CLIENT, UNWIND_DEFERRED_BENCH) are for test kernels only and
# UNWIND_USER_SFRAME_VALIDATE is a debugging aid: off, as a distribution
# would have them (the test, debug and race kernels build them at W=1).
FRAG_SERIES="CONFIG_KUNIT=m
CONFIG_UNWIND_USER_SFRAME=y
CONFIG_UNWIND_USER_KUNIT_TEST=m
CONFIG_UNWIND_DEFERRED_KUNIT_TEST=m
CONFIG_SFRAME_KUNIT_TEST=m"
# What the series' code hooks into, so that the patched base files are
# compiled with their hooks (Debian's configuration has all of it).
FRAG_HOOKS="CONFIG_PERF_EVENTS=y
CONFIG_DEBUG_FS=y
CONFIG_RUNTIME_TESTING_MENU=y
CONFIG_FTRACE=y
CONFIG_FUNCTION_TRACER=y
CONFIG_FTRACE_SYSCALLS=y
CONFIG_KPROBES=y
CONFIG_KPROBE_EVENTS=y
CONFIG_BPF_SYSCALL=y
CONFIG_BPF_EVENTS=y
CONFIG_VIRTUALIZATION=y
CONFIG_KVM=m
CONFIG_KVM_INTEL=m"
# How the series' symbols must come out: on amd64 all on; on i386 none of
# them (64-bit only), while KUNIT stays =m and the hooks stay on.
WANT_AMD64="CONFIG_HAVE_UNWIND_USER_FP=y
CONFIG_HAVE_UNWIND_USER_SFRAME=y
CONFIG_UNWIND_USER=y
CONFIG_UNWIND_DEFERRED=y
$FRAG_SERIES
$FRAG_HOOKS"
WANT_I386="CONFIG_HAVE_UNWIND_USER_FP=n
CONFIG_HAVE_UNWIND_USER_SFRAME=n
CONFIG_UNWIND_USER=n
CONFIG_UNWIND_DEFERRED=n
CONFIG_UNWIND_DEFERRED_WALK_COUNT=n
CONFIG_UNWIND_USER_SFRAME=n
CONFIG_UNWIND_USER_SFRAME_VALIDATE=n
CONFIG_UNWIND_USER_KUNIT_TEST=n
CONFIG_UNWIND_DEFERRED_KUNIT_TEST=n
CONFIG_SFRAME_KUNIT_TEST=n
CONFIG_UNWIND_TEST_CLIENT=n
CONFIG_UNWIND_DEFERRED_BENCH=n
CONFIG_X86_32=y
CONFIG_KUNIT=m
$FRAG_HOOKS"

# The objects the series adds or changes: every kernel .c file it adds
# (series/*/files) or patches (+++ b/ lines), as .o, and objects that
# include the headers it changes (sched.h, mm_types.h, entry-common.h,
# resume_user_mode.h, perf_event.h, bpf.h, prctl.h, kernel/trace/trace.h,
# trace_entries.h, kernel/events/internal.h).
series_objects() {
	{
		cat "$SERIES_DIR"/*/files
		sed -n 's|^+++ b/||p' "$SERIES_DIR"/*/*.patch
	} | grep -E '\.c$' | grep -vE '^(tools|Documentation|samples|scripts)/' | sed 's/\.c$/.o/'
	printf '%s\n' kernel/fork.o kernel/exit.o fs/exec.o kernel/entry/common.o \
		kernel/entry/kvm.o kernel/events/core.o kernel/events/ring_buffer.o \
		kernel/trace/trace.o kernel/trace/trace_output.o
}

# The objects and subdirectories kbuild builds in DIR under OBJ's .config:
# DIR's Makefile (or Kbuild) evaluated with the configuration, obj-y, obj-m
# and lib-y, with the parts of composite objects.
kbuild_objs() {	# OBJ ARCH DIR
	local mk=$SRC/$3/Makefile
	[ ! -f "$SRC/$3/Kbuild" ] || mk=$SRC/$3/Kbuild
	[ -f "$mk" ] || return 0
	make -s --no-print-directory -C "$SRC" -f - print-objs \
		srctree="$SRC" objtree="$1" src="$3" obj="$3" CC=gcc \
		ARCH="$2" SRCARCH=x86 BITS="$([ "$2" = i386 ] && echo 32 || echo 64)" \
		MK="$mk" 2>/dev/null <<'EOF' || true
include $(objtree)/.config
include $(srctree)/scripts/Kbuild.include
include $(MK)
print-objs:
	@echo $(foreach o,$(sort $(obj-y) $(obj-m) $(lib-y)),$(o) $($(o:.o=-y)) $($(o:.o=-objs)) $($(o:.o=-m)))
EOF
}

# Is OBJECT built under OBJ's configuration: listed in its directory's
# Makefile, and each directory above it listed in its parent's (top-level
# directories and arch/x86 always are)?
reached() {	# OBJ ARCH DIR: is DIR (no trailing slash) descended into?
	[[ $3 == */* ]] || return 0
	[ "$3" != arch/x86 ] || return 0
	kbuild_objs "$1" "$2" "${3%/*}" | tr ' ' '\n' | grep -xF "${3##*/}/" >/dev/null &&
		reached "$1" "$2" "${3%/*}"
}
built() {	# OBJ ARCH OBJECT
	kbuild_objs "$1" "$2" "${3%/*}" | tr ' ' '\n' | grep -xF "${3##*/}" >/dev/null &&
		reached "$1" "$2" "${3%/*}"
}

# Kconfig output that is a warning (olddefconfig's output only, not
# merge_config's notes on what the fragment redefines).
# A warning comes with its indented details ("Depends on", "Selected by").
kconfig_warnings() {
	awk 'tolower($0) ~ /warning|unmet|error/ { print; more = 1; next }
	     more && /^ / { print; next } { more = 0 }' "$1"
}
# Warnings of the build. Not counted: bison's on genksyms' grammar, a host
# tool of the base that Debian's configuration builds (MODVERSIONS) in
# "make prepare" ("parse.y: warning: 9 shift/reduce conflicts"); the
# pristine base gives the same.
build_warnings() {
	grep -E 'warning:' "$1" | grep -vE '/scripts/genksyms/parse\.y: warning: [0-9]+ (shift|reduce)/reduce conflicts' || true
}
# A warning as "file: message", without the tree's path, line and column,
# so that the same warning of the series' tree and the base's compare equal.
# The path may be another tree's: ccache hands back the warnings of the
# compile it cached, made in whichever checkout compiled the file first.
warn_key() { sed -E "s#^($SRC|$BSRC)/##; s#^/[^: ]*/(src|src-base)/##; s#^([^: ]+):[0-9]+:([0-9]+:)? #\1: #"; }

# The pristine base (base_tree, lib.sh) tells the base's own warnings at W=1
# from the series': Debian's configuration builds code the tinyconfig
# kernels never build, and some of it warns at W=1 in 6.12 itself
# (arch/x86/kernel/process.c: "variable 'hi' set but not used").

# The warnings of the series' build (log $1) that the base does not give:
# the objects that warned (all of them if a header warned) are compiled
# from the base with the same configuration (ARCH $2, series' output
# directory $3), and a warning counts as the series' when the series' build
# gives it, file and message, more often than the base's.
series_warnings() {	# LOG ARCH OBJ OBJECTS...
	local log=$1 arch=$2 obj=$3 bobj=$3-base o f redo='' all=''
	shift 3
	build_warnings "$log" >"$log.warnings"
	[ -s "$log.warnings" ] || return 0
	while IFS= read -r f; do
		f=${f#"$SRC"/}
		case $f in
		*.c) redo="$redo ${f%.c}.o" ;;
		*) all=1 ;;
		esac
	done < <(sed -E 's/:[0-9]+:([0-9]+:)? .*//' "$log.warnings" | sort -u)
	[ -z "$all" ] || redo="$*"
	local bobjs=
	for o in $redo; do
		[ ! -f "$BSRC/${o%.o}.c" ] || bobjs="$bobjs $o"
	done
	: >"$log.base"
	if [ -n "$bobjs" ]; then
		mkdir -p "$bobj"
		cp "$obj/.config" "$bobj/.config"
		for o in $bobjs; do rm -f "$bobj/$o"; done
		# shellcheck disable=SC2086
		{ make -C "$BSRC" O="$bobj" ARCH="$arch" CC="$KCC" olddefconfig &&
		  make -C "$BSRC" O="$bobj" ARCH="$arch" CC="$KCC" -j"$JOBS" W=1 $bobjs; } >"$log.base" 2>&1 ||
			echo "distro: the base's build of$bobjs failed (see $log.base)" >&2
	fi
	# Counted per key: each of the base's warnings excuses one of the series'.
	build_warnings "$log.base" | warn_key >"$log.base.keys"
	local line key
	while IFS= read -r line; do
		key=$(printf '%s\n' "$line" | warn_key)
		if grep -qxF -- "$key" "$log.base.keys"; then
			K=$key awk '!done && $0 == ENVIRON["K"] { done = 1; next } { print }' \
				"$log.base.keys" >"$log.base.keys.new"
			mv "$log.base.keys.new" "$log.base.keys"
			echo "NOTE distro: the base gives it too: $line" >&2
		else
			printf '%s\n' "$line"
		fi
	done <"$log.warnings"
}

fail=0
for cfg in $cfgs; do
	case $cfg in
	amd64) arch=x86_64; want=$WANT_AMD64 ;;
	i386) arch=i386; want=$WANT_I386 ;;
	*) die "unknown configuration $cfg (amd64, i386)" ;;
	esac
	obj=$BUILD/obj-distro-$cfg
	mkdir -p "$obj"
	t0=$(date +%s)
	klog=$logs/distro-$cfg.kconfig.log
	blog=$logs/distro-$cfg.build.log
	: >"$klog"

	# The configuration.
	frag=$obj/series.config
	printf '%s\n%s\n' "$FRAG_SERIES" "$FRAG_HOOKS" >"$frag"
	if [ "$cfg" = amd64 ]; then
		xzcat "$DISTRO_CONFIG" >"$obj/.config"
	else
		make -C "$SRC" O="$obj" ARCH="$arch" CC="$KCC" defconfig >>"$klog" 2>&1 ||
			die "$cfg: make defconfig failed (see $klog)"
	fi
	(cd "$obj" && "$SRC/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag") \
		>"$obj/merge.log" 2>&1 || die "$cfg: merge_config.sh failed (see $obj/merge.log)"
	make -C "$SRC" O="$obj" ARCH="$arch" CC="$KCC" olddefconfig >>"$klog" 2>&1 ||
		die "$cfg: make olddefconfig failed (see $klog)"
	kw=$(kconfig_warnings "$klog")
	bad=
	while IFS= read -r line; do
		case $line in
		CONFIG_*=n) opt=${line%=n}
			! grep -q "^$opt=" "$obj/.config" || bad="$bad $opt(=n)" ;;
		CONFIG_*=*)
			grep -qx "$line" "$obj/.config" || bad="$bad $line" ;;
		esac
	done <<<"$want"
	if [ -n "$kw" ]; then
		echo "FAIL distro.$cfg.kconfig: $(echo "$kw" | head -1)"
		echo "$kw" | sed 's/^/  /' | head -20
		fail=1
	elif [ -n "$bad" ]; then
		echo "FAIL distro.$cfg.kconfig: options not as intended:$bad"
		fail=1
	else
		echo "PASS distro.$cfg.kconfig"
	fi
	t1=$(date +%s)

	# The objects this configuration builds.
	objs=
	skipped=
	for o in $(series_objects | sort -u); do
		[ -f "$SRC/${o%.o}.c" ] || continue
		if built "$obj" "$arch" "$o"; then
			objs="$objs $o"
		else
			skipped="$skipped $o"
		fi
	done
	t2=$(date +%s)
	{
		echo "objects:$objs"
		echo "not in this configuration:$skipped"
	} >"$blog"
	log "distro.$cfg: $(wc -w <<<"$objs") objects; not in this configuration:${skipped:- none}"

	# Every object compiled again, so that a run shows all the warnings,
	# not only those of what changed (ccache gives them back quickly).
	for o in $objs; do rm -f "$obj/$o"; done
	ok=1
	# shellcheck disable=SC2086
	make -C "$SRC" O="$obj" ARCH="$arch" CC="$KCC" -j"$JOBS" W=1 $objs >>"$blog" 2>&1 || ok=
	build_warnings "$blog" >"$blog.warnings"
	# shellcheck disable=SC2086
	if [ -z "$ok" ]; then
		first=$(grep -m1 -E 'error:|Error [0-9]|\*\*\*' "$blog" || tail -1 "$blog")
		echo "FAIL distro.$cfg.build: $first"
		grep -E 'error:|warning:' "$blog" | sed 's/^/  /' | head -20
		fail=1
	elif [ -s "$blog.warnings" ] && base_tree &&
	     sw=$(series_warnings "$blog" "$arch" "$obj" $objs) && [ -n "$sw" ]; then
		echo "FAIL distro.$cfg.build: $(echo "$sw" | head -1)"
		echo "$sw" | awk '{ n[$0]++; if (n[$0] == 1) o[++k] = $0 }
			END { for (i = 1; i <= k; i++) printf "  %s%s\n", o[i], (n[o[i]] > 1 ? " (x" n[o[i]] ")" : "") }' | head -20
		fail=1
	else
		echo "PASS distro.$cfg.build"
	fi
	t3=$(date +%s)
	log "distro.$cfg: kconfig $((t1 - t0))s, object list $((t2 - t1))s, build $((t3 - t2))s (logs: $klog $blog)"
done
exit $fail
