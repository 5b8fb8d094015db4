#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Tables for code mapped after the recording started, loaded while perf
# records (perf's side-band watch of the executable mappings, which runs
# eh2sframe --load --pid for a process that maps a file without a table).
# TAP, one line a check. Measured as eh_tables.sh measures bash: the share
# of samples whose user stack is complete.
#
#  - Debian's python3.11 computing in its _decimal module, which it
#    dlopen()s when the script imports decimal: of the samples whose
#    innermost user frame is in the module, the share complete to libc's
#    __libc_start_main. Without the watch (the start's tables loaded by
#    hand, perf run with --no-sframe-tables) almost none are; with it, at
#    least 95%.
#  - the no-FP SFrame demo (static: glibc's read() is in the program,
#    without SFrame) started by a shell: perf loads tables for the shell
#    it starts, the demo's only when the shell executes it. Its read()
#    samples: every one cut without the watch, at least 95% exact to
#    main() with it.
#  - a copy of the demo that another user could have written, started the
#    same way: perf runs the helper, which loads no table for it (the rule
#    of contract 23: root converts no file a user controls).
#  - unwindprof --tables, the same way: python3.11 in _decimal, and the
#    demo executed by the shell it started (exec: unwindprof follows one
#    process, not its children); its stacks complete as perf's.
# Where a share is judged with the table loaded while recording, the
# program waits (a poll of /dev/sframe_tables for its build-id, at most a
# minute) until the helper loaded it, before the work that is sampled: the
# share judges the stacks taken with the table in place, not how long the
# helper took. Under TCG that time depends on the host's load: in one CI
# run, with the host busy, unwindprof's helper loaded _decimal's table
# after 139 of 1982 samples (93% complete), in a quiet boot before the
# first. A watch that never loads the table fails the check beside it
# (the table is not in the store) and the share (every stack cut).
. /tests/eh_lib.sh
PY=/usr/bin/python3.11
echo "1..10"

# The module the samples are judged in, and its build-id.
DEC=$(ls /usr/lib/python3.11/lib-dynload/_decimal.*.so)
dec_id=$($E "$DEC" | sed -n 's/.*: build-id \([0-9a-f]*\),.*/\1/p')

# py_chains FILE: one line per python3.11 sample whose innermost user frame
# is in _decimal: its user frames' symbols, innermost first.
py_chains() {
	$P script --no-inline -i "$1" -F comm,ip,sym,dso 2>/dev/null |
	awk '
	function flush() {
		if (mine && first ~ /_decimal/)
			print u
		mine = 0
	}
	/^[^ \t]/ { flush(); mine = ($1 ~ /^python3/); u = ""; first = ""; next }
	/^$/ { flush(); next }
	mine && $1 !~ /^ffff/ {
		if (first == "")
			first = $NF
		u = u " " $2
	}
	END { flush() }'
}

# A computation that stays in _decimal (libmpdec's arithmetic, linked into
# the module): square roots at 60 digits. About 1.2 s of guest CPU time
# on the test kernel; the helper ran about 0.2 s after the mapping.
PY_JOB='import decimal
import time
def wait_table(id):
    for i in range(12000):
        with open("/dev/sframe_tables") as f:
            if any(l.startswith(id + " ") for l in f):
                return
        time.sleep(0.005)
    print("python: no table for build-id " + id + " in /dev/sframe_tables")
WAIT
decimal.getcontext().prec = 60
x = decimal.Decimal(2)
for i in range(LOOPS):
    x = (x * 7 + 1).sqrt()
'
# py_job LOOPS [BUILD-ID]: the job; with BUILD-ID, it first waits until
# the table of that build-id (_decimal's) is loaded.
py_job() {
	echo "$PY_JOB" | sed -e "s/LOOPS/$1/" \
		-e "s/^WAIT\$/${2:+wait_table(\"$2\")}/"
}
LOOPS=${PY_LOOPS:-20000} DEMO_LOOPS=${DEMO_LOOPS:-20000}
PERIOD=1000000
# The debug kernel (KASAN) runs everything several times slower, the
# helper included: test.sh's debug boot skips this job (one CI run had 36
# of 64 samples complete there); run by hand, it does the whole work,
# sampled a quarter as often.
if grep -q ' kasan_report$' /proc/kallsyms 2>/dev/null; then
	PERIOD=4000000
fi

# Without the watch: the start's tables by hand, for python3.11 and the
# libraries it needs, and none for what it dlopen()s.
clear_tables
$E --load -q --needed $PY
record fp,defer py-none --no-sframe-tables -- $PY -S -c "$(py_job $LOOPS)"
py_chains /tmp/eh-py-none.data >/tmp/eh-py-none.chains
set -- $(count /tmp/eh-py-none.chains " __libc_start_main")
echo "# python3.11 in _decimal, start's tables only: $1 of $2 samples complete"
ok=$([ "$2" -ge 20 ] && [ $(($1 * 100)) -le $(($2 * 5)) ] && echo 1)
result "$ok" "python3.11 in _decimal, no table for the module: at most 5% of stacks complete$([ "$ok" ] || echo " ($1 of $2$(why /tmp/eh-py-none.data))")"

# With it: perf loads python3.11's tables at the start, _decimal's when the
# script imports it.
clear_tables
record fp,defer py-late -- $PY -S -c "$(py_job $LOOPS $dec_id)"
result "$(grep -q "^perf: SFrame tables: [1-9][0-9]* more loaded while recording" /tmp/eh-py-late.out &&
	 grep -q "^$dec_id " /dev/sframe_tables && echo 1)" \
	"perf record loads _decimal's table when python3.11 dlopen()s it (build-id $dec_id)"
py_chains /tmp/eh-py-late.data >/tmp/eh-py-late.chains
set -- $(count /tmp/eh-py-late.chains " __libc_start_main")
echo "# python3.11 in _decimal, tables loaded while recording: $1 of $2 samples complete"
grep -v " __libc_start_main" /tmp/eh-py-late.chains | head -n 3 |
	awk '{ printf "# incomplete, %d frames:", NF
	       for (i = 1; i <= NF && i <= 8; i++) printf " %s", $i
	       print "" }'
ok=$([ "$2" -ge 20 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] && echo 1)
result "$ok" "python3.11 in _decimal, dlopen()ed while recording: >= 95% of stacks complete$([ "$ok" ] || echo " ($1 of $2$(why /tmp/eh-py-late.data))")"

# The demo, started by a shell. Its read() samples, as eh_tables.sh's.
want=" leaf level level level level level level level level run main "
sh_demo() {	# sh_demo TAG PROGRAM [DEMO OPTION] [PERF OPTION...]
	tag=$1 prog=$2 dopt=$3
	shift 3
	record fp,defer $tag "$@" -- /bin/sh -c "$prog -l -d 8 -n $DEMO_LOOPS -s 1048576 $dopt >/dev/null; true"
	chains /tmp/eh-$tag.data "$(basename "$prog" | cut -c 1-15)" |
		grep '^R' >/tmp/eh-$tag.chains
}
clear_tables
sh_demo sh-none $DEMO '' --no-sframe-tables
set -- $(count /tmp/eh-sh-none.chains "$want")
echo "# demo started by sh, no watch: $1 of $2 read() samples reach main()"
none_reads=$2
ok=$([ "$2" -ge 20 ] && [ "$1" = 0 ] && echo 1)
result "$ok" "demo started by a shell, without the watch: every stack cut$([ "$ok" ] || echo " ($1 of $2$(why /tmp/eh-sh-none.data))")"

clear_tables
id=$($E $DEMO | sed -n 's/.*: build-id \([0-9a-f]*\),.*/\1/p')
sh_demo sh-late $DEMO "-w $id"
result "$(grep -q "^perf: SFrame tables: [1-9][0-9]* more loaded while recording" /tmp/eh-sh-late.out &&
	 grep -q "^$id " /dev/sframe_tables && echo 1)" \
	"perf record loads the table of the program the shell executes (build-id $id)"
set -- $(count /tmp/eh-sh-late.chains "^R (__libc_read|read)$want")
echo "# demo started by sh, tables loaded while recording: $1 of $2 read() samples exact to main()"
grep -Ev "^R (__libc_read|read)$want" /tmp/eh-sh-late.chains | head -n 3 | sed 's/^/# incomplete: /'
# And the recording is the whole run: the helper's exit must not end it
# (perf record ends at any SIGCHLD), which would leave a complete but
# short recording. The same demo without the watch gave the count to
# compare with: samples are taken per CPU time, so it does not depend on
# the host's load.
ok=$([ "$2" -ge 20 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] &&
     [ $(($2 * 2)) -ge "$none_reads" ] && echo 1)
result "$ok" "demo started by a shell, executed while recording: >= 95% exact to main(), the whole run recorded$([ "$ok" ] || echo " ($1 of $2, $none_reads without the watch$(why /tmp/eh-sh-late.data))")"

# A copy that group members could have written: perf still looks at it
# (it cannot tell), and the helper refuses it.
clear_tables
cp $DEMO /tmp/demo_gw
chmod 0775 /tmp/demo_gw
sh_demo sh-gw /tmp/demo_gw ''
result "$(! grep -q "^$id " /dev/sframe_tables &&
	 grep -q "^eh2sframe: skipping /tmp/demo_gw: writable by its group" /tmp/eh-sh-gw.out &&
	 echo 1)" \
	"no table loaded for a program others could have written, and eh2sframe says why"
clear_tables

# ---- unwindprof --tables. Its folded stacks, "comm;outermost;...;innermost
# COUNT": a frame of stripped _decimal is "_decimal.cpython-...so+0xOFF".
# unwindprof sees a new mapping by looking at the target's maps every 50
# ms, then forks the helper: 0.1 to 0.3 s of guest time passed between
# the demo's exec and its table in the boots of 2026-11-28 (up to 281
# read() samples cut), which the programs' wait (above) leaves out.
U=/tests/bin/unwindprof
# up_count FILE REGEX: the samples of FILE's lines matching REGEX.
up_count() {
	awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"
}
clear_tables
echo "# unwindprof --tables -F 1000 -o /tmp/eh-up-py.txt -- $PY -S -c '...'"
$U -v --tables -F 1000 -o /tmp/eh-up-py.txt -- $PY -S -c "$(py_job $LOOPS $dec_id)" >/tmp/eh-up-py.out 2>&1
sed 's/^/# /' /tmp/eh-up-py.out | grep -v '^# libbpf' | head -n 20
# Samples whose innermost frame is in _decimal (the count is the last
# field; the innermost frame is the one before it).
dec_in='_decimal[^;]* [0-9]+$'
py_all=$(up_count /tmp/eh-up-py.txt "$dec_in")
py_ok=$(up_count /tmp/eh-up-py.txt ";__libc_start_main;.*$dec_in")
echo "# unwindprof: python3.11 in _decimal: $py_ok of $py_all samples complete to __libc_start_main"
[ "$py_all" -ge 20 ] || sort -t ' ' -k 2 -rn /tmp/eh-up-py.txt | head -n 5 | cut -c 1-300 | sed 's/^/# top: /'

grep -E "$dec_in" /tmp/eh-up-py.txt | grep -v ';__libc_start_main;' | head -n 3 | cut -c 1-300 |
	sed 's/^/# incomplete: /'
result "$(grep -q "^unwindprof: --tables: eh2sframe ran [1-9][0-9]* times for code mapped while profiling" /tmp/eh-up-py.out &&
	 grep -q "^$dec_id " /dev/sframe_tables && echo 1)" \
	"unwindprof --tables loads _decimal's table when python3.11 dlopen()s it"
result "$([ "$py_all" -ge 20 ] && [ $((py_ok * 100)) -ge $((py_all * 95)) ] && echo 1)" \
	"unwindprof: python3.11 in _decimal, dlopen()ed while profiled: >= 95% of stacks complete ($py_ok of $py_all)"

clear_tables
echo "# unwindprof --tables -F 1000 -o /tmp/eh-up-sh.txt -- /bin/sh -c 'exec $DEMO ...'"
$U -v --tables -F 1000 -o /tmp/eh-up-sh.txt -- \
	/bin/sh -c "exec $DEMO -l -d 8 -n $DEMO_LOOPS -s 1048576 -w $id >/dev/null" >/tmp/eh-up-sh.out 2>&1
sed 's/^/# /' /tmp/eh-up-sh.out | grep -v '^# libbpf' | head -n 12
# In read(): the innermost frame is glibc's read (static in the demo).
rd_in=';(__libc_read|__read|read) [0-9]+$'
sh_all=$(up_count /tmp/eh-up-sh.txt "$rd_in")
sh_ok=$(up_count /tmp/eh-up-sh.txt ";main;run;level;level;level;level;level;level;level;level;leaf$rd_in")
echo "# unwindprof: demo executed by sh: $sh_ok of $sh_all read() samples exact to main()"
grep -E "$rd_in" /tmp/eh-up-sh.txt | grep -v ';main;run;' | head -n 3 | cut -c 1-300 |
	sed 's/^/# incomplete: /'
result "$([ "$sh_all" -ge 20 ] && [ $((sh_ok * 100)) -ge $((sh_all * 95)) ] &&
	 grep -q "^$id " /dev/sframe_tables && echo 1)" \
	"unwindprof: demo executed while profiled: its table loaded, >= 95% exact to main() ($sh_ok of $sh_all)"
clear_tables
