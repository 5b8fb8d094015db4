#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Complete user stacks through code that has only .eh_frame: SFrame tables
# made by eh2sframe from each file's .eh_frame, loaded by build-id into
# /dev/sframe_tables, walked by perf's fp,defer. perf record loads them
# itself (runs eh2sframe --load --needed for the workload); the runs
# without tables use --no-sframe-tables. TAP, one line a check.
#
#  - the no-FP SFrame demo reading through glibc's read() wrapper (static:
#    libc's code is in the program, without SFrame): cut at read() without
#    a table, and with the program's table loaded complete to main(), with
#    the demo's exact frames;
#  - Debian's own bash (no frame pointers, no SFrame, stripped), running a
#    recursive shell function: with tables for bash and its libraries, the
#    share of samples whose user stack is complete (reaches
#    __libc_start_main, as bash's main() has no symbol, or, while ld.so
#    starts the process, ld.so's _start), against the same with
#    --call-graph dwarf;
#  - bash and libc as the copies eh2sframe --elf writes, each with its
#    table as its own section, run with nothing loaded;
#  - a table loaded for a running process after its mappings were walked
#    without one (perf record -p, then eh2sframe --load --pid, then perf
#    record -p again): the second recording's stacks are complete.
. /tests/eh_lib.sh
clear_tables

echo "1..12"
# The user frames of a read() sample of the demo, from glibc's read() out.
want=" leaf level level level level level level level level run main "

# demo TAG [PERF OPTION...]: record the demo reading through glibc's read()
# into /tmp/eh-TAG.data, its read() samples' chains into /tmp/eh-TAG.chains
# and what perf printed the first time into /tmp/eh-TAG.first. How many
# samples a run gets inside read() depends on how the host schedules QEMU:
# 90 to 160 of about 850 in 100 reads when it runs alone (most are the
# demo's start: a run of one read has about 450, in memset() and page
# faults), 32 of 418 beside another guest, and none in one CI run. A run
# with fewer than 10 (too few to judge) is done again with ten times the
# reads, twice at most, and says how many it had (the last run's count is
# then the one judged).
demo() {
	tag=$1
	shift
	rm -f /tmp/eh-$tag.first
	for loops in 100 1000 10000; do
		record fp,defer $tag "$@" -- $DEMO -l -d 8 -n $loops -s 1048576
		[ -f /tmp/eh-$tag.first ] || cp /tmp/eh-$tag.out /tmp/eh-$tag.first
		chains /tmp/eh-$tag.data unwind_demo_sfr | grep '^R' >/tmp/eh-$tag.chains
		r=$(wc -l </tmp/eh-$tag.chains)
		[ "$r" -lt 10 ] || break
		echo "# only $r read() samples in $loops reads$(why /tmp/eh-$tag.data)"
	done
}

demo demo-none --no-sframe-tables
set -- $(count /tmp/eh-demo-none.chains "$want")
echo "# without a table: $1 of $2 read() samples reach main()"
ok=$([ "$2" -ge 10 ] && [ "$1" = 0 ] && echo 1)
result "$ok" "demo through glibc's read(), no table: every stack cut ($2 samples$([ "$ok" ] || why /tmp/eh-demo-none.data))"

# perf loads the table itself: one line from eh2sframe, then the recording.
id=$($E $DEMO | sed -n 's/.*: build-id \([0-9a-f]*\),.*/\1/p')
demo demo-table
result "$(grep -q "^eh2sframe: loaded 1 table" /tmp/eh-demo-table.first &&
	 grep -q "^$id " /dev/sframe_tables && echo 1)" \
	"perf record --call-graph fp,defer loads the demo's table by build-id"

set -- $(count /tmp/eh-demo-table.chains "^R (__libc_read|read)$want")
echo "# with the table: $1 of $2 read() samples reach main(), exact frames"
head -n 2 /tmp/eh-demo-table.chains | sed 's/^/# /'
ok=$([ "$2" -ge 10 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] && echo 1)
result "$ok" "demo through glibc's read() with its table: >= 95% exact to main()$([ "$ok" ] || echo " ($1 of $2$(why /tmp/eh-demo-table.data))")"

$E --remove $DEMO >/tmp/eh-rm.out 2>&1
rc=$?
sed 's/^/# /' /tmp/eh-rm.out
result "$([ $rc = 0 ] && ! grep -q "^$id " /dev/sframe_tables && echo 1)" \
	"eh2sframe --remove removes the demo's table"
# EH_DEMO_ONLY=1: the demo's tests only (the repeat job's eh_demo).
[ -z "${EH_DEMO_ONLY:-}" ] || exit 0

# Debian's bash: a shell function 10 calls deep that counts at the bottom,
# about 90 frames with the arithmetic's own recursion: within perf's
# default of 127 frames a stack, deeper than dwarf's 8 KiB copy. One
# sample per 400 us of CPU: each walk of 90 frames costs tens of
# microseconds under TCG. On a KASAN kernel (the debug kernel) one per
# 1.6 ms: there a walk costs about 400 us, and each walk's own time drew
# the next sample (tens of thousands of samples for perf script to read,
# more the busier the host).
# bash_job LOOPS: the job, counting to LOOPS at the bottom.
bash_job() {
	echo 'f() { if [ "$1" -gt 0 ]; then f $(($1 - 1)); else i=0; while [ $i -lt '"$1"' ]; do i=$((i + 1)); done; fi; }; f 10'
}
BASH_JOB=$(bash_job 10000)
PERIOD=400000
! grep -q ' kasan_report$' /proc/kallsyms 2>/dev/null || PERIOD=1600000
record fp,defer bash-none --no-sframe-tables -- /bin/bash -c "$BASH_JOB"
chains /tmp/eh-bash-none.data bash >/tmp/eh-bash-none.chains
nouser=$(user_only /tmp/eh-bash-none.chains)
set -- $(count /tmp/eh-bash-none.chains " __libc_start_main")
echo "# bash, fp,defer, no tables: $1 of $2 samples reach __libc_start_main ($nouser without user frames left out)"
# A frame-pointer guess through code built without them may still land on
# a real chain once in a while: at most 1%.
result "$([ "$2" -ge 20 ] && [ $(($1 * 100)) -le "$2" ] && echo 1)" \
	"bash without tables: at most 1% of stacks complete ($2 samples)"

record fp,defer bash-table -- /bin/bash -c "$BASH_JOB"
nt=$(grep -c . /dev/sframe_tables)
result "$(grep -q "^eh2sframe: loaded [1-9]" /tmp/eh-bash-table.out &&
	 [ "$nt" -ge 3 ] && echo 1)" \
	"perf record loads tables for bash and the libraries it needs ($nt tables)"
chains /tmp/eh-bash-table.data bash >/tmp/eh-bash-table.chains
nouser=$(user_only /tmp/eh-bash-table.chains)
# Complete: to __libc_start_main, or, while the process starts (ld.so
# relocating itself and loading bash's libraries), to ld.so's _start.
done_re=" __libc_start_main| ld[.]so:_start$"
set -- $(count /tmp/eh-bash-table.chains "$done_re")
ok=$1 all=$2
set -- $(count /tmp/eh-bash-table.chains " ld[.]so:_start$")
starting=$1
# What the incomplete ones are: their depth and their outermost frames.
grep -Ev "$done_re" /tmp/eh-bash-table.chains | head -n 5 |
	awk '{ printf "# incomplete, %d frames:", NF - 1
	       for (i = 2; i <= NF; i++)
		       if (i <= 7 || i > NF - 3) printf " %s", $i
		       else if (i == 8) printf " ..."
	       print "" }'
record dwarf bash-dwarf -- /bin/bash -c "$BASH_JOB"
chains /tmp/eh-bash-dwarf.data bash >/tmp/eh-bash-dwarf.chains
dnouser=$(user_only /tmp/eh-bash-dwarf.chains)
set -- $(count /tmp/eh-bash-dwarf.chains "$done_re")
echo "# bash: fp,defer with tables $ok of $all samples complete ($starting of them in ld.so's start; $nouser without user frames left out); dwarf $1 of $2 ($dnouser left out)"
result "$([ "$all" -ge 20 ] && [ $((ok * 100)) -ge $((all * 95)) ] && echo 1)" \
	"bash with tables: >= 95% of stacks complete"
grep -o '^[^ ]* [0-9a-f]*' /dev/sframe_tables | sed 's/^/# loaded: /'
clear_tables
result "$(grep -q . /dev/sframe_tables || echo 1)" "every table removed"

# Without the privilege, perf loads nothing and says, in one line, how to.
# util-linux's setpriv (busybox's cannot change the uid).
ps=$(cat /proc/sys/kernel/perf_event_paranoid)
echo 1 > /proc/sys/kernel/perf_event_paranoid
mkdir -p /tmp/unpriv && chmod 777 /tmp/unpriv
HOME=/tmp/unpriv /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups \
	$P record -N --call-graph fp,defer -e cpu-clock -c 100000 -o /tmp/unpriv/perf.data \
	-- $DEMO -l -d 8 -n 20 -s 65536 >/tmp/eh-unpriv.out 2>&1
rc=$?
echo $ps > /proc/sys/kernel/perf_event_paranoid
sed 's/^/# /' /tmp/eh-unpriv.out | head -5
set -- $(count /tmp/eh-unpriv.out "CAP_PERFMON")
result "$([ $rc = 0 ] && [ "$1" = 1 ] &&
	 grep -q "as root, run 'eh2sframe --load --needed $DEMO' first" /tmp/eh-unpriv.out &&
	 ! grep -q . /dev/sframe_tables && echo 1)" \
	"unprivileged: no table loaded, one line saying how to load them"

# The same bash job from copies that carry their tables as their own
# sections (eh2sframe --elf), the library found through LD_LIBRARY_PATH,
# with no table loaded for either. ld.so, which bash's PT_INTERP names,
# is the system's: its table is loaded, for the samples taken while it
# starts the process, as in test 7.
clear_tables
mkdir -p /tmp/elf
$E -q --elf /tmp/elf/bash /bin/bash && $E -q --elf /tmp/elf/libc.so.6 /lib/x86_64-linux-gnu/libc.so.6
rc=$?
# Not the command alone: bash would exec cat, whose maps these are not.
LD_LIBRARY_PATH=/tmp/elf /tmp/elf/bash -c 'cat /proc/$$/maps; :' >/tmp/eh-elf-maps.out
nb=$(grep -c " /tmp/elf/bash$" /tmp/eh-elf-maps.out)
nl=$(grep -c " /tmp/elf/libc.so.6$" /tmp/eh-elf-maps.out)
result "$([ $rc = 0 ] && [ "$nb" -ge 1 ] && [ "$nl" -ge 1 ] && echo 1)" \
	"eh2sframe --elf copies of bash and libc run ($nb and $nl mappings)"
$E -q --load /lib64/ld-linux-x86-64.so.2
# One sample per 4 ms of CPU, the same depth, a third of the loop: 60 to
# 85 samples on the test kernel. At test 7's rate the debug kernel, where
# each walk through sections in user memory costs far more (KASAN), took
# tens of thousands, which perf script then needs minutes to read. Fewer
# than 20 (the host starving QEMU, as for the demo above): once more with
# ten times the loop.
PERIOD=4000000
# Also complete: a stack that is the entry point alone. A sample taken in
# execve() before perf recorded ld.so's mapping prints ld.so's _start by
# its symbol; the debug kernel, slow to exec, had 28 of 174 once (issue
# 34's faster deliveries made the loop short).
elf_done_re="$done_re|^[R-] _start\$"
# On the debug kernel (KASAN) a third of the loop gave 534 samples in one
# CI run, 46 of them incomplete (8.6%), those shown all one frame at one
# address of bash's text that perf could not name (0x317e8 if bash was
# mapped at ...173000: the ret of crtstuff's deregister_tm_clones(), code
# with no FDE to walk by); the test kernel had none. Another run had them
# all at bash's _init (.init, the first page of its text, no FDE either).
# Both are one kernel entry each, whose walk ran long: the first walk of
# bash's mapping examines its section, tens of ms on KASAN, and each
# cpu-clock sample taken meanwhile asks for the same entry's stack again.
# Such samples (the walk in their kernel part) are left out: they count
# the walker's time, not the stacks of the loop. The loop is longer on
# KASAN too, against any other fixed cost of the process's start or exit.
elf_loops="3000 30000"
! grep -q ' kasan_report$' /proc/kallsyms 2>/dev/null || elf_loops="10000 30000"
for loops in $elf_loops; do
	LD_LIBRARY_PATH=/tmp/elf record fp,defer bash-elf --no-sframe-tables -- /tmp/elf/bash \
		-c "$(bash_job $loops)"
	chains /tmp/eh-bash-elf.data bash /tmp/eh-bash-elf.walks >/tmp/eh-bash-elf.chains
	nouser=$(user_only /tmp/eh-bash-elf.chains)
	set -- $(count /tmp/eh-bash-elf.chains "$elf_done_re")
	[ "$2" -lt 20 ] || break
	echo "# only $2 samples with user frames in a loop of $loops"
done
echo "# bash and libc with their own sections (--elf), ld.so's table loaded: $1 of $2 samples complete ($nouser without user frames and $(cat /tmp/eh-bash-elf.walks) in the walk left out)"
# Below the bar, show what the incomplete stacks were, and the whole
# sample (time, kernel frames) of the first two at the first such address.
if [ $(($1 * 100)) -lt $(($2 * 95)) ]; then
	grep -Ev "$elf_done_re" /tmp/eh-bash-elf.chains | head -20 | sed 's/^/# incomplete: /'
	a=$(grep -Ev "$elf_done_re" /tmp/eh-bash-elf.chains | awk '{ sub(/^\?/, "", $NF); print $NF; exit }')
	$P script -i /tmp/eh-bash-elf.data -F comm,tid,time,ip,sym --show-mmap-events 2>/dev/null |
		awk -v a="$a" '/PERF_RECORD_MMAP2.*elf\/bash/ { print; next }
			/^[^ \t]/ { b = $0; next }
			{ b = b "\n" $0 }
			/^$/ && index(b, a) && n++ < 2 { print b }' | sed 's/^/# /'
fi
result "$([ "$2" -ge 20 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] &&
	 [ "$(grep -c . /dev/sframe_tables)" = 1 ] && echo 1)" \
	"bash and libc as --elf copies, only ld.so's table loaded: >= 95% of stacks complete"
clear_tables

# A table loaded after the process's mappings were first walked must serve
# them from then on (the documented order: record, see the hint, load as
# root, record again). The demo runs on its own; the first recording walks
# its mapping (which has its own section: the entry kept for it has no
# table), then root loads the table, then a second recording, which loads
# nothing itself, must have complete stacks.
clear_tables
$DEMO -l -d 8 -n 100000000 -s 1048576 >/dev/null &
dpid=$!
record fp,defer later-none --no-sframe-tables -p $dpid -- sleep 1
chains /tmp/eh-later-none.data unwind_demo_sfr | grep '^R' >/tmp/eh-later-none.chains
$E --load --pid $dpid >/tmp/eh-later-load.out 2>&1
sed 's/^/# /' /tmp/eh-later-load.out
for secs in 1 3 9; do
	record fp,defer later-table --no-sframe-tables -p $dpid -- sleep $secs
	chains /tmp/eh-later-table.data unwind_demo_sfr | grep '^R' >/tmp/eh-later-table.chains
	[ "$(wc -l </tmp/eh-later-table.chains)" -lt 10 ] || break
	echo "# only $(wc -l </tmp/eh-later-table.chains) read() samples in $secs s"
done
kill $dpid
wait $dpid 2>/dev/null
set -- $(count /tmp/eh-later-none.chains "$want")
echo "# first recording, no table: $1 of $2 read() samples reach main()"
first=$1
set -- $(count /tmp/eh-later-table.chains "^R (__libc_read|read)$want")
echo "# after eh2sframe --load --pid: $1 of $2 read() samples reach main(), exact frames"
result "$([ "$first" = 0 ] && [ "$2" -ge 10 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] &&
	 grep -q "^$id " /dev/sframe_tables && echo 1)" \
	"a table loaded after the process was walked serves it: >= 95% exact to main()$([ "$2" -ge 10 ] || why /tmp/eh-later-table.data)"
clear_tables
