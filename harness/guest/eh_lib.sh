#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What eh_tables.sh, eh_late.sh and deep_stacks.sh share: the programs,
# the TAP result, a recording and the chains of its samples. Sourced.
P=/tests/perf/perf
E=/tests/bin/eh2sframe
DEMO=/tests/bin/unwind_demo_sframe
trap "" PIPE
export HOME=/tmp PATH=/tests/perf:/tests/bin:$PATH
n=0
result() {	# result OK NAME
	n=$((n + 1))
	if [ "$1" = 1 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}

# The dynamic loader's entry point (e_entry of its ELF header): its _start,
# where every dynamically linked process begins, and whose code runs until
# ld.so hands over to the program, before libc's __libc_start_main is on
# the stack.
LDSO_ENTRY=$(od -A n -t x8 -j 24 -N 8 /lib64/ld-linux-x86-64.so.2 | tr -d ' ')

# chains FILE COMM: one line per sample of COMM: R when its kernel part is
# inside read() of /dev/zero (else -), then the symbols of its user frames,
# innermost first. bash is stripped: its own frames are "?ADDRESS". A
# frame in ld.so's _start (placed from perf's mapping event for ld.so) is
# "ld.so:_start". A complete stack reaches libc's __libc_start_main or,
# while the process starts, ends in ld.so's _start.
#
# In read() of /dev/zero: read_zero (or iov_iter_zero) in the kernel part,
# or, for a sample in rep_stos_alternative, the frameless routine that
# clears user memory, vfs_read: the kernel's frame-pointer unwinder
# starts such a sample at its caller's frame, so it skips that caller,
# read_zero. In one CI run 5352 of the demo's 6306 samples were there,
# and R without them counted 749 read() samples against 3653 in the
# recording before.
#
# chains FILE COMM WALKS: the same, without the samples taken while the
# deferred walk itself ran (its caller in their kernel part); how many
# there were goes to the file WALKS. Such a sample repeats the stack of
# the entry that asked for the walk, under the same cookie: a walk that
# first examines a big section on KASAN (tens of ms) makes one entry, one
# stack, count as dozens of samples.
chains() {
	$P script --no-inline --show-mmap-events -i "$1" -F comm,ip,sym 2>/dev/null |
	awk -v comm="$2" -v entry="$LDSO_ENTRY" -v walks="${3:-}" '
	function hex(s,   i, v) {
		v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	function tohex(v,   s) {
		s = ""
		for (; v > 0; v = int(v / 16))
			s = substr("0123456789abcdef", v % 16 + 1, 1) s
		return s
	}
	function page(s) { return substr(s, 1, length(s) - 3) }
	function flush() {
		if (mine && walks != "" &&
		    k ~ / (unwind_deferred_run|__unwind_deferred_resume|unwind_deferred_flush)( |$)/)
			nwalk++
		else if (mine)
			print ((k ~ / (read_zero|iov_iter_zero)/ ||
				(k ~ /^ rep_stos_alternative / && k ~ / vfs_read /)) ? "R" : "-") u
		mine = 0
	}
	/PERF_RECORD_MMAP2/ {
		flush()
		if ($0 ~ /r-xp .*\/ld-linux-x86-64\.so\.2$/ &&
		    match($0, /\[0x[0-9a-f]+\(/)) {
			a = substr($0, RSTART + 3, RLENGTH - 4)
			match($0, / @ 0x[0-9a-f]+ /)
			ld = hex(a) - hex(substr($0, RSTART + 5, RLENGTH - 6)) + hex(entry)
			p1 = page(tohex(ld))
			p2 = page(tohex(ld + 63))
		}
		next
	}
	/PERF_RECORD/ { flush(); next }
	/^[^ \t]/ { flush(); mine = ($1 == comm); k = ""; u = ""; next }
	/^$/ { flush(); next }
	mine {
		if ($1 ~ /^ffff/)
			k = k " " $2
		else if (ld && (page($1) == p1 || page($1) == p2) &&
			 hex($1) >= ld && hex($1) < ld + 64)
			u = u " ld.so:_start"
		else
			u = u " " ($2 == "[unknown]" ? "?" $1 : $2)
	}
	END { flush(); if (walks != "") print nwalk + 0 > walks }'
}

# record MODE TAG [PERF OPTION...] -- CMD...: perf record with MODE into
# /tmp/eh-TAG.data; what perf printed goes to /tmp/eh-TAG.out.
record() {
	mode=$1 tag=$2 opts=
	shift 2
	while [ "$1" != -- ]; do
		opts="$opts $1"
		shift
	done
	shift
	$P record -N --call-graph "$mode" -e cpu-clock -c ${PERIOD:-100000} $opts \
		-o /tmp/eh-$tag.data -- "$@" >/tmp/eh-$tag.out 2>&1
	sed 's/^/# /' /tmp/eh-$tag.out
}

# user_only FILE: keep the samples that have a user frame, print how many
# had none. Such a sample has no user stack to be complete or cut (its
# kernel part only, as when the process exits after its memory is gone).
# In one CI run the debug kernel, slower at exit and start, had 669 of
# 10,829 bash samples incomplete by test 7's count, the first four shown
# of them without any user frame.
user_only() {
	grep -c '^[R-]$' "$1"
	grep -v '^[R-]$' "$1" >"$1.u"
	mv "$1.u" "$1"
}

# count FILE PATTERN: "matching total" over lines of FILE.
count() {
	awk -v re="$2" '{ t++ } $0 ~ re { m++ } END { printf "%d %d", m, t }' "$1"
}

# why FILE: when a count is too low, what the recording holds: perf
# script's exit status (its first error line on stderr), the samples per
# comm, the most frequent innermost frames, and the sample rate the kernel
# allows now (it lowers it when perf's interrupts take too long).
# One perf script run gives both: a sample's first line starts with its
# comm, its frames follow indented.
why() {
	$P script -i "$1" -F comm,ip,sym >/tmp/eh-why.out 2>/tmp/eh-why.err
	rc=$?
	sed -n '1s/^/# perf script: /p' /tmp/eh-why.err >&2
	printf '; perf script rc %s, samples by comm:%s; innermost frames:%s' $rc \
		"$(awk '/^[^ \t]/ { print $1 }' /tmp/eh-why.out |
		   sort | uniq -c | sort -rn | head -n 4 |
		   awk '{ printf " %s %s", $2, $1 }')" \
		"$(awk '/^[^ \t]/ { top = 1; next } top && NF { print $2; top = 0 }' /tmp/eh-why.out |
		   sort | uniq -c | sort -rn | head -n 4 |
		   awk '{ printf " %s %s", $2, $1 }')"
	printf '; perf_event_max_sample_rate %s' \
		"$(cat /proc/sys/kernel/perf_event_max_sample_rate)"
}

# Tables stay loaded after perf exits: start from an empty store (earlier
# jobs' perf runs loaded the demos' tables).
clear_tables() {
	for f in $(awk '{ print $1 }' /dev/sframe_tables); do
		echo "remove $f" >/dev/sframe_tables
	done
}
