#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Contract 23 (trust) for the tables loaded for files that processes map:
# eh2sframe --load --pid/--all, which perf record runs as root for -p/-a
# with --call-graph fp,defer. A table serves every process that maps a
# file with its build-id, and the first one loaded stays, so root must
# not convert a file another user controls. TAP, one line a check.
#
#  - libeh_forged.so (build-progs.sh) is a small library that claims the
#    build-id of libtinfo, which bash maps: a user's copy of it, mapped by
#    a process of that user (uid 65534), gets no table, with --pid and
#    with --all, and eh2sframe says why; nor does a copy of root's that
#    others may write; root's own copy does. libtinfo's own table loads
#    afterwards.
#  - What a mapped file's path names once it was mapped (a FIFO, a
#    symbolic link to /dev/zero, /dev itself mounted over the directory,
#    another file) is never opened: through /proc/PID/map_files as root,
#    by path without the capabilities map_files needs. eh2sframe returns
#    at once, says what it found, and inotify sees no open.
#  - perf runs no eh2sframe from an empty or relative PATH entry.
#  - perf record -p PID -- sleep 1 loads the tables of PID's files, not
#    of sleep's (review m15); -a -- sleep 1 those of every process's,
#    skipping the user's file.
#  - unwindprof -a, which symbolizes every process's stacks as root, reads
#    the mapped files under the same rule (review m17): a user's stripped
#    program, with a FIFO where libdwfl looks for its debuginfo, and then a
#    FIFO at its path, is never opened, nor the FIFO (20, 21).
#
# With 15-18 this is the hostile-user matrix (issue 31): what a user
# (uid 65534, no capabilities) can do, each with its exact outcome.
#   store, through root's loading  forged build-id (2, 3, 14), a file
#                                  others may write (4), FIFO, symbolic
#                                  link, device or other file at the path
#                                  perf looks at (7-11), PATH (12)
#   /dev/sframe_tables             open for reading, writing or both:
#                                  EPERM (15)
#   prctl(PR_UNWIND_CONTEXT)       SET of a kernel address, GET into a
#                                  read-only page: EFAULT (16)
#   perf_event_open()              a deferred event on root's process:
#                                  EACCES, as the same event without (17)
#   the walker                     the user's own program with a malformed
#                                  SFrame section, profiled by the user:
#                                  every stack in its code ends at its first
#                                  frame; the intact copy reaches main() (18)
#   perf with file capabilities    a copy of perf with CAP_PERFMON from
#                                  its file, run by the user: one line says
#                                  how to load tables, and eh2sframe, which
#                                  would not get the capability, is not
#                                  run (19)
#   a full store                   a user adds nothing to it (2-4, 14);
#                                  root's own loads then fail with ENOSPC
#                                  and lose nothing (sframe_tables 5, 13)
#   another layout                 a table never serves a file of another
#                                  layout under its build-id (sframe_tables
#                                  14, 15)
E=/tests/bin/eh2sframe
H=/tests/bin/eh_trust_helper
P=/tests/perf/perf
FORGED=/tests/bin/libeh_forged.so
VICTIM=$(cat /tests/bin/libeh_forged.victim)
D=/tmp/trust
export HOME=/tmp
n=0
result() {	# result OK NAME
	n=$((n + 1))
	if [ "$1" = 1 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}
skip() {	# skip NAME: a check that cannot run here
	n=$((n + 1))
	echo "ok $n $1 # SKIP"
}

# Tables stay loaded (earlier jobs loaded some): start from none.
clear_tables() {
	for f in $(awk '{ print $1 }' /dev/sframe_tables); do
		echo "remove $f" >/dev/sframe_tables
	done
}
# loaded ID: is a table loaded for build-id ID?
loaded() {
	grep -q "^$1 " /dev/sframe_tables
}
# forged: is the forged file's table loaded, not the victim's? (A process
# of root's that maps the victim, as bash does, gets the victim's own
# table loaded by --all, rightly.)
forged() {
	grep -q "^$id $fsize " /dev/sframe_tables
}
# show [FILE]: what a command printed, as TAP comments.
show() {
	sed 's/^/# /' "$@"
}
# hold UID FILE: a process that maps FILE executable as UID; its pid.
hold() {
	$H hold "$1" "$2"
}
# run FILE OUT CMD...: CMD, killed after 60 s, its output (and inotify's
# count of FILE's opens meanwhile, "opens of FILE: N") into OUT.
run() {
	f=$1 out=$2
	shift 2
	$H opens 60 "$f" "$@" >"$out" 2>&1
	rc=$?
	show "$out"
}
# opened FILE OUT: FILE was opened, or the command timed out.
opened() {
	! grep -qx "opens of $1: 0" "$2"
}
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	pids=
	for m in $mounts; do
		umount "$m" 2>/dev/null
	done
	mounts=
	clear_tables
}

echo "1..21"
clear_tables
rm -rf $D
mkdir -p $D/user $D/root $D/wr
chmod 755 $D $D/user $D/root $D/wr

# 1. The forged library claims the build-id of the victim, without being it.
id=$($E $FORGED | sed -n 's/.*: build-id \([0-9a-f]*\),.*/\1/p')
vid=$($E $VICTIM | sed -n 's/.*: build-id \([0-9a-f]*\),.*/\1/p')
size='s/.*table: version=2 size=\([0-9]*\) .*/\1/p'
fsize=$($E $FORGED | sed -n "$size")
vsize=$($E $VICTIM | sed -n "$size")
echo "# $FORGED and $VICTIM: build-id $id and $vid, tables of $fsize and $vsize bytes"
result "$([ -n "$id" ] && [ "$id" = "$vid" ] && [ "$fsize" != "$vsize" ] && echo 1)" \
	"the forged library claims $(basename $VICTIM)'s build-id"

# 2. A user's copy, mapped by that user's process: no table, one line.
cp $FORGED $D/user/libeh_forged.so
chown 65534:65534 $D/user/libeh_forged.so
chmod 755 $D/user/libeh_forged.so
upid=$(hold 65534 $D/user/libeh_forged.so)
pids="$upid"
grep -q " $D/user/libeh_forged.so$" /proc/$upid/maps 2>/dev/null ||
	echo "# process $upid does not map $D/user/libeh_forged.so"
# inotify: root does not even open it.
clear_tables
run $D/user/libeh_forged.so $D/pid.out $E --load --pid "$upid"
result "$([ $rc = 0 ] && ! loaded "$id" && ! opened $D/user/libeh_forged.so $D/pid.out &&
	 grep -q "^eh2sframe: skipping $D/user/libeh_forged.so: owned by uid 65534$" $D/pid.out &&
	 echo 1)" \
	"--pid: a user's file with a forged build-id is skipped, said, not loaded (rc $rc)"

# 3. The same with --all.
clear_tables
run $D/user/libeh_forged.so $D/all.out $E --load --all
result "$([ $rc = 0 ] && ! forged && ! opened $D/user/libeh_forged.so $D/all.out &&
	 grep -q "^eh2sframe: skipping $D/user/libeh_forged.so: owned by uid 65534$" $D/all.out &&
	 echo 1)" \
	"--all: a user's file with a forged build-id is skipped, said, not loaded (rc $rc)"

# 4. Root's file, but others may write it.
cp $FORGED $D/wr/libeh_forged.so
chmod 646 $D/wr/libeh_forged.so
wpid=$(hold 0 $D/wr/libeh_forged.so)
pids="$pids $wpid"
clear_tables
run $D/wr/libeh_forged.so $D/wr.out $E --load --pid "$wpid"
result "$([ $rc = 0 ] && ! loaded "$id" && ! opened $D/wr/libeh_forged.so $D/wr.out &&
	 grep -q "^eh2sframe: skipping $D/wr/libeh_forged.so: writable by others (mode 0646)$" $D/wr.out &&
	 echo 1)" \
	"--pid: root's file that others can write is skipped, said, not loaded (rc $rc)"

# 5. Root's own copy: root put it there, so it is loaded, and said.
cp $FORGED $D/root/libeh_forged.so
chmod 644 $D/root/libeh_forged.so
rpid=$(hold 0 $D/root/libeh_forged.so)
pids="$pids $rpid"
clear_tables
run $D/root/libeh_forged.so $D/root.out $E --load --pid "$rpid"
result "$([ $rc = 0 ] && forged &&
	 grep -q "^$D/root/libeh_forged.so: loaded for build-id $id, " $D/root.out &&
	 echo 1)" \
	"--pid: root's own file is loaded, and said (rc $rc)"
$E -q --remove "$id"

# 6. Nothing of the forged file is left in the way: the victim's own table
# loads for its build-id, with its own size.
$E --load $VICTIM >$D/victim.out 2>&1
rc=$?
show $D/victim.out
# Its fields: build-id, bytes, mappings.
# shellcheck disable=SC2046
set -- $(grep "^$id " /dev/sframe_tables)
echo "# store: $*"
result "$([ $rc = 0 ] && [ "${2:-}" = "$vsize" ] && echo 1)" \
	"$(basename $VICTIM)'s own table loads afterwards ($vsize bytes)"
$E -q --remove "$id"

# 7-11. Paths that name something else once mapped. Each process maps a
# regular file in a directory of its own; then something is mounted over
# that directory: a FIFO, a symbolic link to /dev/zero, /dev, another file
# in place of the mapped one. /proc/PID/maps still shows the old path.
# swap NAME UID FILE: map a copy of FILE at $D/swap/NAME/lib.so as UID
# (for "dev", $D/swap/dev/zero); the process's pid.
swap() {
	mkdir -p $D/swap/$1 $D/over/$1
	lib=$D/swap/$1/lib.so
	[ "$1" != dev ] || lib=$D/swap/dev/zero
	cp "$3" $lib
	chown "$2:$2" $lib
	chmod 755 $lib
	hold "$2" $lib
}
fpid=$(swap fifo 65534 $FORGED)
mkfifo $D/over/fifo/lib.so
lpid=$(swap link 65534 $FORGED)
ln -s /dev/zero $D/over/link/lib.so
dpid=$(swap dev 65534 $FORGED)
# Root's file is mapped; the path then names the user's forged one.
opid=$(swap other 0 $H)
cp $FORGED $D/over/other/lib.so
chown 65534:65534 $D/over/other/lib.so
pids="$pids $fpid $lpid $dpid $opid"
for d in fifo link other; do
	mount -o bind $D/over/$d $D/swap/$d && mounts="$mounts $D/swap/$d"
done
mount -o bind /dev $D/swap/dev && mounts="$mounts $D/swap/dev"
ls -l $D/swap/fifo/lib.so $D/swap/link/lib.so $D/swap/dev/zero $D/swap/other/lib.so | show
grep -h " $D/swap/" /proc/$fpid/maps /proc/$lpid/maps /proc/$dpid/maps /proc/$opid/maps | show

# 7. As root, through map_files: the mapped file, never the FIFO.
run $D/over/fifo/lib.so $D/fifo-root.out $E --load --pid "$fpid"
result "$([ $rc = 0 ] && ! opened $D/over/fifo/lib.so $D/fifo-root.out &&
	 grep -q "^eh2sframe: skipping $D/swap/fifo/lib.so: owned by uid 65534$" $D/fifo-root.out &&
	 echo 1)" \
	"FIFO at the path, as root: the mapped file is checked, the FIFO never opened (rc $rc)"

# 8-11: without CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE (map_files is
# refused), by path: each is refused for what it is, and nothing opened.
run $D/over/fifo/lib.so $D/fifo.out $H nocaps $E --load --pid "$fpid"
result "$([ $rc = 0 ] && ! opened $D/over/fifo/lib.so $D/fifo.out &&
	 grep -q "^eh2sframe: skipping $D/swap/fifo/lib.so: not a regular file (a FIFO)$" $D/fifo.out &&
	 echo 1)" \
	"FIFO at the path, by path: skipped at once as a FIFO, never opened (rc $rc)"

run /dev/zero $D/link.out $H nocaps $E --load --pid "$lpid"
result "$([ $rc = 0 ] && ! opened /dev/zero $D/link.out &&
	 grep -q "^eh2sframe: skipping $D/swap/link/lib.so: not a regular file (a symbolic link)$" $D/link.out &&
	 echo 1)" \
	"symbolic link to /dev/zero at the path: skipped, /dev/zero never opened (rc $rc)"

run /dev/zero $D/dev.out $H nocaps $E --load --pid "$dpid"
result "$([ $rc = 0 ] && ! opened /dev/zero $D/dev.out &&
	 grep -q "^eh2sframe: skipping $D/swap/dev/zero: not a regular file (a character device)$" $D/dev.out &&
	 echo 1)" \
	"/dev mounted over the directory: /dev/zero skipped, never opened (rc $rc)"

run $D/over/other/lib.so $D/other.out $H nocaps $E --load --pid "$opid"
result "$([ $rc = 0 ] && ! loaded "$id" && ! opened $D/over/other/lib.so $D/other.out &&
	 grep -q "^eh2sframe: skipping $D/swap/other/lib.so: not the file process $opid maps" $D/other.out &&
	 echo 1)" \
	"another file at the path: skipped as not the mapped one, the user's file never opened (rc $rc)"
cleanup

# as_user CMD...: CMD as uid and gid 65534, with no capabilities (util-linux's
# setpriv: busybox's cannot change the uid).
as_user() {
	HOME=/tmp /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# 15-17: the device, the prctl and perf_event_open(), as the user.
matrix() {
	as_user $H try open /dev/sframe_tables r >$D/dev-r.out 2>&1
	as_user $H try open /dev/sframe_tables w >$D/dev-w.out 2>&1
	as_user $H try open /dev/sframe_tables rw >$D/dev-rw.out 2>&1
	show $D/dev-r.out $D/dev-w.out $D/dev-rw.out
	result "$([ "$(cat $D/dev-r.out $D/dev-w.out $D/dev-rw.out)" = \
		   "$(printf 'open: EPERM\nopen: EPERM\nopen: EPERM')" ] && echo 1)" \
		"a user's open of /dev/sframe_tables, to read, write or both: EPERM"

	as_user $H try prctl-set 0xffffffff81000000 >$D/prctl.out 2>&1
	as_user $H try prctl-get-ro >>$D/prctl.out 2>&1
	show $D/prctl.out
	result "$([ "$(cat $D/prctl.out)" = \
		   "$(printf 'prctl SET: EFAULT\nprctl GET: EFAULT')" ] && echo 1)" \
		"a user's context SET of a kernel address, GET into a read-only page: EFAULT"

	as_user $H try perf 1 >$D/perf1.out 2>&1
	show $D/perf1.out
	result "$([ "$(cat $D/perf1.out)" = \
		   "$(printf 'perf defer: EACCES\nperf plain: EACCES')" ] && echo 1)" \
		"a user's deferred event on root's process: EACCES, as without defer_callchain"
}

# 20-21. unwindprof -a symbolizes the stacks of every process as root,
# through libdwfl (review m17). A process of the user's runs the user's
# own stripped copy of the helper, $D/up/prog/prog, with a FIFO at
# prog.debug beside it: libdwfl's standard lookup opens that name for a
# file without .symtab, and blocked on it for good. The process is
# stopped and continued every second, so that unwindprof --off-cpu gets a
# stack of it (its first frame is in its own code) and symbolizes it.
# 20: nothing in the directory is opened, the program is refused for its
# owner, and its frames are named by file and offset. 21: then a FIFO is
# mounted over the program's path: as root (map_files reaches the
# mapped file, refused for its owner) and without the capabilities
# map_files needs (by path: refused as a FIFO), nothing is opened there.
U=/tests/bin/unwindprof
unwindprof_rows() {
	if [ ! -x $U ]; then
		skip "unwindprof -a: a user's program, a FIFO for its debuginfo"
		skip "unwindprof -a: a FIFO over a user's program's path"
		return
	fi
	mkdir -p $D/up/prog $D/up/over
	chmod 755 $D/up $D/up/prog $D/up/over
	cp /tests/bin/eh_trust_helper_stripped $D/up/prog/prog
	chown 65534:65534 $D/up/prog/prog
	chmod 755 $D/up/prog/prog
	mkfifo $D/up/prog/prog.debug $D/up/over/prog $D/up/over/prog.debug
	# It runs its own copy, and maps it once more as the user.
	upid=$($D/up/prog/prog hold 65534 $D/up/prog/prog)
	pids="$pids $upid"
	(while kill -STOP "$upid" 2>/dev/null; do
		sleep 1
		kill -CONT "$upid"
		sleep 1
	done) &
	tick=$!
	run $D/up/prog $D/up.out $U -a --off-cpu -d 5 -o $D/up.folded
	grep "^prog;" $D/up.folded | show
	result "$([ $rc = 0 ] && ! opened $D/up/prog $D/up.out &&
		 grep -q "^unwindprof: not symbolizing $D/up/prog/prog: owned by uid 65534$" $D/up.out &&
		 grep -q "^prog;.*prog+0x[0-9a-f]* [0-9]*$" $D/up.folded &&
		 echo 1)" \
		"unwindprof -a: a user's program is not read, the FIFO for its debuginfo never opened (rc $rc)"

	mount -o bind $D/up/over $D/up/prog && mounts="$mounts $D/up/prog"
	run $D/up/over $D/up-root.out $U -a --off-cpu -d 5 -o $D/up-root.folded
	r1=$rc
	run $D/up/over $D/up-path.out $H nocaps $U -a --off-cpu -d 5 -o $D/up-path.folded
	result "$([ $r1 = 0 ] && [ $rc = 0 ] && ! opened $D/up/over $D/up-root.out &&
		 ! opened $D/up/over $D/up-path.out &&
		 grep -q "^unwindprof: not symbolizing $D/up/prog/prog: owned by uid 65534$" $D/up-root.out &&
		 grep -q "^unwindprof: not symbolizing $D/up/prog/prog: not a regular file (a FIFO)$" $D/up-path.out &&
		 echo 1)" \
		"unwindprof -a: a FIFO at a user's program's path, as root and by path, never opened (rc $r1, $rc)"
	kill $tick 2>/dev/null
	kill -CONT "$upid" 2>/dev/null
	cleanup
}

# 12-14: perf record, when it loads tables itself.
if [ ! -x $P ]; then
	skip "perf runs no eh2sframe from an empty or relative PATH entry"
	skip "perf record -p PID -- sleep 1 loads for PID, not for sleep"
	skip "perf record -a -- sleep 1 loads root's mapped file, skips the user's"
	matrix
	skip "a user's program with a malformed SFrame section, profiled by the user"
	skip "perf with CAP_PERFMON from its file, run by a user: the hint, no helper run"
	unwindprof_rows
	rm -rf $D
	exit 0
fi

# 12. An empty and a relative PATH entry, each with an eh2sframe that
# would leave a mark, and none next to perf: perf runs neither.
mkdir -p $D/cwd/bin
printf '#!/bin/sh\ntouch %s/planted\n' $D > $D/cwd/eh2sframe
chmod 755 $D/cwd/eh2sframe
cp $D/cwd/eh2sframe $D/cwd/bin/eh2sframe
(cd $D/cwd && PATH=":bin:/bin" $P record -N --call-graph fp,defer -e cpu-clock \
	-c 100000 -o $D/path.data -- /bin/true) >$D/path.out 2>&1
rc=$?
show $D/path.out
result "$([ $rc = 0 ] && [ ! -e $D/planted ] && [ ! -e "$(dirname $P)/eh2sframe" ] &&
	 grep -q "is not next to perf or in an absolute PATH directory" $D/path.out &&
	 echo 1)" \
	"perf runs no eh2sframe from an empty or relative PATH entry (rc $rc)"

export PATH=/tests/perf:/tests/bin:$PATH
bb=$($E /bin/busybox | sed -n 's/.*: build-id \([0-9a-f]*\),.*/\1/p')
# 13. -p PID -- sleep 1: the workload only times the recording.
rpid=$(hold 0 $D/root/libeh_forged.so)
pids=$rpid
$P record -N --call-graph fp,defer -e cpu-clock -c 1000000 -o $D/p.data \
	-p "$rpid" -- sleep 1 >$D/p.out 2>&1
rc=$?
show $D/p.out
result "$([ $rc = 0 ] && forged && [ -n "$bb" ] && ! loaded "$bb" &&
	 grep -q "^perf: SFrame tables: loading those of the files mapped by process $rpid," $D/p.out &&
	 grep -q "^$D/root/libeh_forged.so: loaded for build-id $id, " $D/p.out &&
	 echo 1)" \
	"perf record -p PID -- sleep 1 loads for PID's files, not for sleep (busybox $bb) (rc $rc)"
clear_tables

# 14. -a -- sleep 1: every process's files that root owns, and sleep's;
# the user's file is skipped, and perf says so.
upid=$(hold 65534 $D/user/libeh_forged.so)
pids="$pids $upid"
$P record -N --call-graph fp,defer -e cpu-clock -c 1000000 -o $D/a.data \
	-a -- sleep 1 >$D/a.out 2>&1
rc=$?
show $D/a.out
result "$([ $rc = 0 ] && forged && loaded "$bb" &&
	 grep -q "^perf: SFrame tables: loading those of the files mapped by every process, .*, and of sleep " $D/a.out &&
	 grep -q "^$D/root/libeh_forged.so: loaded for build-id $id, " $D/a.out &&
	 grep -q "^eh2sframe: skipping $D/user/libeh_forged.so: owned by uid 65534$" $D/a.out &&
	 echo 1)" \
	"perf record -a -- sleep 1 loads root's mapped file and sleep's, skips the user's, says so (rc $rc)"
cleanup

matrix

# 18. The user's own program, built with frame pointers and an SFrame
# section, the section malformed (every function's rows start past it),
# profiled by the user at perf_event_paranoid 1: every sample whose first
# user frame is in the demo's code has that frame alone (the walk ends,
# where frame pointers would go on); the intact copy, the control, reaches
# main() from all of them (contract 14).
# user_stacks NAME: per sample of NAME's perf.data whose first user frame is
# in the demo's own code (leaf, full, level, run, main: glibc's code, linked
# in without SFrame, is walked by frame pointers), "<user frames> <1 if
# main() is among them>".
user_stacks() {
	as_user $P script -i $D/h/$1.data -F ip,sym,dso 2>/dev/null | awk -v prog="$1" '
		BEGIN { RS = "" }
		{
			n = 0; first = ""; fsym = ""; main = 0
			for (i = 1; i <= NF; i++) {
				if ($i !~ /^[0-9a-f]+$/ || length($i) >= 16)
					continue
				n++
				if (n == 1) {
					first = $(i + 2)
					fsym = $(i + 1)
				}
				if ($(i + 1) == "main")
					main = 1
			}
			if (index(first, "/" prog ")") &&
			    fsym ~ /^(leaf|full|level|run|main)$/) {
				print n, main
				if (n > 1 && shown++ < 3) {
					gsub(/\n/, "\n# ")
					print "# " $0 >"/dev/stderr"
				}
			}
		}'
}
mkdir -p $D/h
cp /tests/bin/unwind_demo_fps_bad /tests/bin/unwind_demo_fps $D/h/
chown -R 65534:65534 $D/h
read -r par </proc/sys/kernel/perf_event_paranoid
echo 1 >/proc/sys/kernel/perf_event_paranoid
for prog in unwind_demo_fps_bad unwind_demo_fps; do
	(cd $D/h && as_user $P record -N --no-sframe-tables --call-graph fp,defer \
		-e cpu-clock -c 100000 -o $D/h/$prog.data -- $D/h/$prog -n 2000) \
		>$D/h/$prog.out 2>&1 || echo "# perf record of $prog failed"
done
echo "$par" >/proc/sys/kernel/perf_event_paranoid
user_stacks unwind_demo_fps_bad >$D/h/bad.st 2>$D/h/bad.more
show $D/h/bad.more
user_stacks unwind_demo_fps >$D/h/good.st 2>/dev/null
bad=$(wc -l <$D/h/bad.st)
bad1=$(awk '$1 == 1' $D/h/bad.st | wc -l)
good=$(wc -l <$D/h/good.st)
goodm=$(awk '$2 == 1' $D/h/good.st | wc -l)
echo "# malformed copy: $bad1 of $bad samples with one user frame; intact copy: $goodm of $good reach main()"
result "$([ "$bad" -ge 20 ] && [ "$bad1" = "$bad" ] && [ "$good" -ge 20 ] &&
	 [ "$goodm" = "$good" ] && echo 1)" \
	"a user's program with a malformed SFrame section, profiled by the user: one frame, never a guess"

# 19. perf with CAP_PERFMON from its file capabilities, run by the user:
# the device opens, but a program perf runs does not inherit the
# capability, so eh2sframe could load nothing: one line says how to load
# the tables, and it is not run (review nit; before, "eh2sframe failed (1)").
cp $P $D/root/perf-caps
chmod 755 $D/root/perf-caps
if $H filecap $D/root/perf-caps; then
	as_user $D/root/perf-caps record -N --call-graph fp,defer -e cpu-clock \
		-c 100000 -o $D/h/caps.data -- /bin/true >$D/h/caps.out 2>&1
	rc=$?
	# Only perf's lines about tables: its kptr_restrict warning would read
	# as a kernel "WARNING:" to the console check.
	grep -e "SFrame" -e "eh2sframe" -e "failed" $D/h/caps.out | show
	result "$([ $rc = 0 ] &&
		 grep -q "^perf: SFrame tables for code without frame pointers are not loaded: perf's CAP_PERFMON comes from its file" $D/h/caps.out &&
		 ! grep -q "failed (" $D/h/caps.out && echo 1)" \
		"perf with CAP_PERFMON from its file, run by a user: the hint, no helper run (rc $rc)"
else
	result "" "perf with CAP_PERFMON from its file: setting the file capability failed"
fi
unwindprof_rows
rm -rf $D
