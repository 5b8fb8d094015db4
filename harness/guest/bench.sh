#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Benchmarks, run by /init for unwind.job=idle and unwind.job=bench:
#   sh /tests/bench.sh PART
# Every figure is printed as one line "@ PART key=value ...", one line per
# run; harness/bench.sh takes medians and spreads on the host. The number
# of runs comes from unwind.runs= on the kernel command line (default 5),
# the profiled demo's loop count from unwind.loops= (default 20000).
# unwind.parts=NAME,... runs only the parts named (as in bench.list,
# without "bench_"), for a short look at some of them.
# unwind.depths=D,... walks only those stack depths on the deliver parts'
# depth axis (default 8,32,128,480): the test command's budget check
# (harness/budget-check.py) needs two of them, and every depth costs guest
# time.
# Fields are read by word splitting into "set --", on purpose.
# shellcheck disable=SC2046,SC2086
P=/tests/perf/perf
B=/sys/kernel/debug/unwind_deferred_bench
T=/sys/kernel/tracing
. /tests/perf_bytes.sh
# perf may run addr2line, which the initramfs does not have.
trap "" PIPE
export HOME=/tmp PATH=/tests/perf:$PATH
runs=5
loops=20000
parts=
depths="8 32 128 480"
for arg in $(cat /proc/cmdline); do
	case $arg in
	unwind.runs=*) runs=${arg#unwind.runs=} ;;
	unwind.loops=*) loops=${arg#unwind.loops=} ;;
	unwind.parts=*) parts=${arg#unwind.parts=} ;;
	unwind.depths=*) depths=$(echo "${arg#unwind.depths=}" | tr , ' ') ;;
	esac
done

# Rotate the list "$@" by $1 places, so that no variant always runs first.
rotate() {
	n=$1
	shift
	while [ "$n" -gt 0 ]; do
		v=$1
		shift
		set -- "$@" "$v"
		n=$((n - 1))
	done
	echo "$@"
}

# set_tracers K: register K bench tracers (a number or "all") and print how
# many the client now has.
set_tracers() {
	echo "tracers $1" > $B/ctl || return 1
	sed 's/tracers=\([0-9]*\).*/\1/' $B/stats
}

# 1. The exit-to-user hook with nothing requesting: getppid() round trips.
idle() {
	for r in $(seq "$runs"); do
		set -- $(unwind_bench syscall -d 8 -n 300000)
		echo "@ idle run=$r $4 calls=${3#calls=}"
	done
}

# 2. Request cost in the kernel, against an atomic increment, with 1, 8 and
# all tracers registered (the first request of the others then finds the
# walk pending).
request() {
	for r in $(seq "$runs"); do
		for k in 1 8 all; do
			n=$(set_tracers $k) || return 1
			set -- $(unwind_bench request -n 400 -i 2000 -k "$n")
			shift
			echo "@ request run=$r set=$k $*"
		done
	done
	echo "tracers 0" > $B/ctl
}

# 5. Request plus delivery (walk and callbacks) per system call, against the
# same system call without a request, by stack depth, tracers, threads.
# "deliver sframe": by depth only, the driver built without frame pointers,
# walked through its SFrame section.
# "deliver table": the same driver with its PT_GNU_SFRAME header made
# PT_NULL (unwind_bench_table), walked through the table that eh2sframe
# made from its .eh_frame and loaded by build-id: kernel memory, no user
# access for the table.
deliver() {
	case ${1:-} in
	context)
		# The same delivery at depth 32: alone, with a thread context
		# registered and its event off, and with the event on.
		ev=/sys/kernel/tracing/events/unwind/unwind_user_context/enable
		echo "tracers 1" > $B/ctl
		for r in $(seq "$runs"); do
			for set in alone off on; do
				c=; [ $set = alone ] || c=-c
				[ $set != on ] || echo 1 > $ev
				set -- $(unwind_bench deliver -d 32 -k 1 -n 400 $c)
				shift
				echo 0 > $ev
				echo > /sys/kernel/tracing/trace
				echo "@ deliver run=$r axis=context set=$set $*"
			done
		done
		echo "tracers 0" > $B/ctl
		return
		;;
	sframe|table)
		b=$1
		prog=unwind_bench_$b
		if [ $b = table ]; then
			/tests/bin/eh2sframe --load /tests/bin/$prog || return 1
		fi
		echo "tracers 1" > $B/ctl
		for r in $(seq "$runs"); do
			for d in $depths; do
				set -- $($prog deliver -d $d -k 1 -n 400)
				shift
				echo "@ deliver run=$r axis=depth build=$b $*"
			done
		done
		echo "tracers 0" > $B/ctl
		[ $b != table ] || /tests/bin/eh2sframe --remove /tests/bin/$prog
		return
	esac
	for r in $(seq "$runs"); do
		for d in $depths; do
			echo "tracers 1" > $B/ctl
			set -- $(unwind_bench deliver -d $d -k 1 -n 400)
			shift
			echo "@ deliver run=$r axis=depth $*"
		done
		for k in 1 8 all; do
			n=$(set_tracers $k)
			set -- $(unwind_bench deliver -d 32 -k "$n" -n 400)
			shift
			echo "@ deliver run=$r axis=tracers set=$k $*"
		done
		echo "tracers 1" > $B/ctl
		for t in 1 2 8; do
			set -- $(unwind_bench deliver -d 32 -k 1 -n 400 -t $t)
			shift
			echo "@ deliver run=$r axis=threads $*"
		done
	done
	echo "tracers 0" > $B/ctl
}

# Bytes and counts of the samples and the deferred callchain records.
dump_bytes() {
	set -- $(perf_bytes $P "$1")
	echo "samples=$1 records=$2 sample_bytes=$3 record_bytes=$4"
}

# Of the demo's samples taken while it ran its own code (the innermost user
# frame is in leaf(), level(), full() or run()), how many have a user stack
# that reaches main(), as perf script shows them: merged with the deferred
# records for fp,defer, unwound from the stack copy for dwarf. perf script
# cuts call chains at kernel.perf_event_max_stack by default; --max-stack
# lifts that, so that what is counted is what was recorded.
completeness() {
	$P script --no-inline --max-stack 1024 -i "$1" -F comm,ip,sym 2>/dev/null | awk '
		function end() {
			if (own) { n++; c += ok }
			own = 0; ok = 0; first = 1
		}
		/^ *[^ \t]/ { end(); next }
		NF >= 2 && $1 !~ /^ffffffff/ {
			if (first && ($2 == "leaf" || $2 == "level" || $2 == "full" || $2 == "run"))
				own = 1
			first = 0
			if ($2 == "main") ok = 1
		}
		END { end(); printf "own_samples=%d complete=%d\n", n, c }'
}

# 3. Profiling the demo with each call-graph mode, and without perf.
# "profile sframe": the demo built without frame pointers, with SFrame.
profile() {
	demo="unwind_demo -n $loops"
	build=
	if [ "${1:-}" = sframe ]; then
		demo="unwind_demo_sframe -n $loops"
		build=" build=sframe"
	fi
	for d in 8 32 128; do
		for r in $(seq "$runs"); do
			for mode in $(rotate $((r % 4)) none fp dwarf fp,defer); do
				f=/tmp/bench.data
				rm -f $f
				if [ $mode = none ]; then
					set -- $(unwind_bench time $demo -d $d 2>&1 >/dev/null)
					echo "@ profile run=$r depth=$d mode=$mode$build loops=$loops $2"
					continue
				fi
				t=$($P record -q -N --call-graph $mode -e cpu-clock -c 100000 \
					-o $f -- unwind_bench time $demo -d $d 2>&1 >/dev/null |
					grep '^time ')
				rt=$(unwind_bench time $P report -i $f --no-inline --stdio \
					--no-children -g caller 2>&1 >/dev/null | grep '^time ')
				set -- $t $rt
				echo "@ profile run=$r depth=$d mode=$mode$build loops=$loops $2" \
				     "size=$(wc -c < $f) report_$5" \
				     "$(dump_bytes $f) $(completeness $f)"
			done
		done
	done
	rm -f /tmp/bench.data
}

# 4. Walks per kernel entry: a demo that sits long in each read(). Also the
# bytes per sample of fp and fp,defer for this workload, side by side.
dedup() {
	demo="unwind_demo -d 8 -n 200 -s 1048576"
	echo watch > $B/ctl
	for r in $(seq "$runs"); do
		f=/tmp/dedup.data
		$P record -q -N --call-graph fp -e cpu-clock -c 100000 -o $f \
			-- $demo >/dev/null 2>&1
		fp=$(dump_bytes $f)
		echo reset > $B/ctl
		$P record -q -N --call-graph fp,defer -e cpu-clock -c 100000 -o $f \
			-- $demo >/dev/null 2>&1
		pid=$(sed -n 's/^pid=\([0-9]*\) comm=unwind_demo .*/\1/p' $B/exits | tail -1)
		walks=$(sed -n "s/^pid=$pid comm=unwind_demo walks=//p" $B/exits)
		$P report -D -i $f 2>/dev/null | awk -v pid="$pid" -v walks="$walks" '
			/PERF_RECORD_SAMPLE\(/ { mine = index($0, ": " pid "/" pid ":") > 0
						 if (mine) s++; marker = 0; next }
			/PERF_RECORD_CALLCHAIN_DEFERRED/ {
				if (index($0, ": " pid "/" pid ":") && match($0, /cookie: 0x[0-9a-f]+/))
					rec[substr($0, RSTART + 8, RLENGTH - 8)]++
				next
			}
			mine && /^\.\.\.\.\. / {
				if (marker) { c = $3; sub(/^0+/, "", c); ck["0x" c]++; marker = 0 }
				else if ($3 == "fffffffffffffd80") marker = 1
			}
			END {
				for (c in ck) { e++; if (rec[c] == 1) one++ }
				for (c in rec) nrec++
				printf "samples=%d entries=%d records=%d one_record=%d walks=%d\n",
					s, e, nrec, one, walks
			}' > /tmp/dedup.out
		set -- $fp
		echo "@ dedup run=$r $(cat /tmp/dedup.out) fp_samples=${1#*=}" \
		     "fp_bytes=$((${3#*=} + ${4#*=})) $(dump_bytes $f)"
	done
	rm -f /tmp/dedup.data /tmp/dedup.out
}

# 7. SFrame discovery: the first walk that meets a freshly dlopen()ed
# library (and examines its mapping) against the same walk again.
discover() {
	echo "tracers 1" > $B/ctl
	for r in $(seq "$runs"); do
		set -- $(unwind_bench_dso discover -n 100)
		shift
		echo "@ discover run=$r $*"
	done
	echo "tracers 0" > $B/ctl
}

# 8. The SFrame registry's memory for a program with 20 dlopen()ed
# libraries with SFrame, after a walk through every one of them.
registry() {
	echo "tracers 1" > $B/ctl
	for r in $(seq "$runs"); do
		set -- $(unwind_bench_dso registry -l 20)
		shift
		echo "@ registry run=$r $*"
	done
	echo "tracers 0" > $B/ctl
}

# 6. ftrace: a getppid() event with the in-place userstacktrace option and
# with userstacktrace_delay, against the event alone and no tracing.
ftrace() {
	ev=$T/events/syscalls/sys_enter_getppid/enable
	echo 4096 > $T/buffer_size_kb
	for d in 8 32 128; do
		for r in $(seq "$runs"); do
			for v in $(rotate $((r % 4)) off event userstacktrace userstacktrace_delay); do
				echo 0 > $ev
				echo nouserstacktrace > $T/trace_options
				echo nouserstacktrace_delay > $T/trace_options
				echo > $T/trace
				case $v in
				off) ;;
				event) echo 1 > $ev ;;
				*) echo $v > $T/trace_options; echo 1 > $ev ;;
				esac
				set -- $(unwind_bench syscall -d $d -n 20000)
				echo 0 > $ev
				stacks=$(grep -c '<user stack trace>\|<user unwind stack>' $T/trace)
				echo "@ ftrace run=$r depth=$d variant=$v ${4} calls=${3#calls=} stacks=$stacks"
			done
		done
	done
	echo nouserstacktrace_delay > $T/trace_options
	echo > $T/trace
}

# 9. BPF as a profiler against perf (bpf_unwind --bench, the selftest's
# driver): mean time per getppid() at the bottom of DEPTH frames with
# nothing attached (none), with BPF's programs asking for the deferred
# stack and copying it at the delivery (bpf), and with a perf event with a
# deferred user callchain (perf); each also with the event alone (a
# program that only counts, bpf_event; a sample without a callchain,
# perf_event), which tells the request and delivery from the cost of a
# system call event; and perf's own frame-pointer walk, in place (perf_fp:
# the walk perf runs in an NMI), the anchor of a frame's cost. And per round trip of two threads
# passing a byte over pipes on one CPU (two context switches), without
# (switch_none) and with (switch_offcpu) the off-CPU programs, which ask at
# every switch out and join the time off the CPU to the stack. Every mode
# starts two seconds after the one before: a tracer's unwind work is
# released a second after its last user goes, and no mode should run with
# another's registered.
bpf() {
	for r in $(seq "$runs"); do
		for d in 8 32; do
			for mode in none bpf_event bpf perf_event perf perf_fp switch_none switch_offcpu; do
				sleep 2
				set -- $(bpf_unwind --bench $mode -d $d -n 400)
				[ "${1:-}" = bench ] || return 1
				shift
				echo "@ bpf run=$r $*"
			done
		done
	done
}

# A check of the bench client and driver for the test job (TAP): the
# figures above are only worth something if these hold.
smoke() {
	tap=0
	t() {	# t DESCRIPTION COMMAND...: one TAP result
		d=$1
		shift
		tap=$((tap + 1))
		if "$@" >/tmp/smoke.out 2>&1; then
			echo "ok $tap $d"
		else
			echo "not ok $tap $d"
			sed 's/^/# /' /tmp/smoke.out
		fi
	}
	frames32() {	# 8 tracers, 20 system calls at depth 32: 160 callbacks
		echo "tracers 8" > $B/ctl &&
		unwind_bench deliver -d 32 -k 8 -n 20 > /tmp/smoke.1 || return 1
		cat /tmp/smoke.1
		grep -q ' callbacks=160 expected=160 nr=36$' /tmp/smoke.1
	}
	all() {	# every tracer bit the core has left
		n=$(set_tracers all) && unwind_bench request -n 3 -i 10 -k "$n"
	}
	walks3() {	# the thread that fired 3 times exits with 3 walks
		echo watch > $B/ctl && echo reset > $B/ctl &&
		unwind_bench deliver -d 8 -k 1 -n 3 >/dev/null || return 1
		cat $B/exits
		grep -qx 'pid=[0-9]* comm=unwind_bench walks=3' $B/exits
	}
	refuse() {	# bad commands fail with EINVAL and change nothing
		echo "tracers 2" > $B/ctl || return 1
		for c in "fire 3" "fire -1" "time 0 1" "time 10 3" "tracers -2" bogus; do
			! echo "$c" > $B/ctl 2>/dev/null || { echo "accepted: $c"; return 1; }
		done
		grep -q '^tracers=2 ' $B/stats
	}
	echo "1..5"
	t "deliver: every callback, 36 frames at depth 32" frames32
	t "request: first, others and pending paths, 8 tracers" \
		unwind_bench request -n 5 -i 10 -k 8
	t "request: all tracers" all
	t "exit log: walks per task" walks3
	t "bad commands refused" refuse
	echo "tracers 0" > $B/ctl
}

part=$(echo "$*" | tr ' ' _)
if [ -n "$parts" ] && [ "$1" != smoke ]; then
	case ",$parts," in
	*",$part,"*) ;;
	*) exit 0 ;;
	esac
fi
"$@"
