#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pack busybox, the test programs and the job lists into $BUILD/initramfs.cpio.gz.
. "$(dirname "$0")/lib.sh"

root=$BUILD/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,tests/bin}
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$REPO/harness/guest/init" "$root/init"
chmod +x "$root/init"
cp "$BUILD"/progs/* "$root/tests/bin/"
cp "$REPO"/harness/guest/*.list "$REPO"/harness/guest/*.sh "$REPO"/harness/guest/*.js "$root/tests/"
# carry BINARY DEST: a dynamically linked program with the libraries it uses.
carry() {
	mkdir -p "$root$(dirname "$2")"
	cp "$1" "$root$2"
	ldd "$1" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
# Debian's own perf (linux-perf), to check that an existing tool still works
# on the patched kernel.
carry /usr/bin/perf /tests/debian/perf
# The patched tree's perf with its shell tests, which need bash.
carry /bin/bash /bin/bash
# util-linux's setpriv, to run a test as an unprivileged user.
carry /usr/bin/setpriv /usr/bin/setpriv
# Debian's python3.11 with what "import decimal" needs (eh_late.sh): the
# _decimal extension module, which it dlopen()s, and the pure-Python
# modules it imports (-S: no site). os.py is the landmark python3.11 finds
# its library by.
carry /usr/bin/python3.11 /usr/bin/python3.11
for f in os.py decimal.py numbers.py keyword.py operator.py reprlib.py \
	collections/__init__.py collections/abc.py encodings/__init__.py \
	encodings/aliases.py encodings/utf_8.py \
	lib-dynload/_decimal.cpython-311-x86_64-linux-gnu.so; do
	mkdir -p "$root/usr/lib/python3.11/$(dirname "$f")"
	cp "/usr/lib/python3.11/$f" "$root/usr/lib/python3.11/$f"
done
# Debian's trace-cmd, to read what the ftrace part records.
carry /usr/bin/trace-cmd /tests/debian/trace-cmd
# The ftrace selftests of the series, with ftracetest.
ft=$SRC/tools/testing/selftests/ftrace
if [ -d "$ft/test.d/userstack" ]; then
	mkdir -p "$root/tests/ftrace/test.d"
	cp "$ft/ftracetest" "$root/tests/ftrace/"
	cp "$ft/test.d/functions" "$root/tests/ftrace/test.d/"
	cp -r "$ft/test.d/userstack" "$root/tests/ftrace/test.d/"
fi
if [ -x "$BUILD/perf/perf" ]; then
	mkdir -p "$root/tests/perf/tests/shell"
	cp "$BUILD/perf/perf" "$root/tests/perf/perf"
	for t in record_defer.sh record_defer_context.sh; do
		cp "$SRC/tools/perf/tests/shell/$t" "$root/tests/perf/tests/shell/"
	done
fi
# perf with its BPF skeletons, for perf record --off-cpu (bpf_prof).
[ ! -x "$BUILD/perf-bpf/perf" ] || cp "$BUILD/perf-bpf/perf" "$root/tests/perf/perf-bpf"
# Every file root's and written by nobody else, whoever built it with
# whichever umask: root's tools in the guest (eh2sframe, unwindprof) read
# only such files for anyone (tools/unwind/mapped.c), and the tests that
# need another owner or mode make their own copies.
chmod -R go-w "$root"
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) > "$BUILD/initramfs.cpio.gz"
log "initramfs: $BUILD/initramfs.cpio.gz"

# The test boot's: the same and Node.js (jit_node.sh), about 100 MB with
# the libraries the others lack, as a second archive after the first (the
# kernel unpacks one after the other): the other boots, the debug boot
# above all (12 s to unpack 40 MB under KASAN), do without it. Only what
# the first archive lacks, and no entry for "." or a directory the first
# has with another mode: an archive's directory entry sets the mode of
# one that exists.
extra=$BUILD/initramfs-node
rm -rf "$extra"
mkdir -p "$extra"
if node=$(command -v node); then
	node=$(readlink -f "$node")
	mkdir -p "$extra/usr/bin"
	cp "$node" "$extra/usr/bin/node"
	ldd "$node" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$extra$(dirname "$lib")"
		cp -L "$lib" "$extra$lib"
	done
	find "$extra" -type d -exec chmod 0755 {} +
	chmod -R go-w "$extra"
fi
{
	cat "$BUILD/initramfs.cpio.gz"
	(cd "$extra" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet | gzip -1)
} > "$BUILD/initramfs-test.cpio.gz.tmp"
mv "$BUILD/initramfs-test.cpio.gz.tmp" "$BUILD/initramfs-test.cpio.gz"
log "initramfs with Node.js, for the test boot: $BUILD/initramfs-test.cpio.gz"
