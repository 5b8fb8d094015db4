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
cp "$REPO"/harness/guest/*.list "$REPO"/harness/guest/*.sh "$root/tests/"
# Debian's own perf (linux-perf), with the libraries it links, to check that
# an existing tool still works on the patched kernel.
if [ -x /usr/bin/perf ]; then
	mkdir -p "$root/tests/debian"
	cp /usr/bin/perf "$root/tests/debian/perf"
	ldd /usr/bin/perf | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
fi
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$BUILD/initramfs.cpio.gz"
log "initramfs: $BUILD/initramfs.cpio.gz"
