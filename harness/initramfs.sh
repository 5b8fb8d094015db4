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
cp "$REPO"/harness/guest/*.list "$root/tests/"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$BUILD/initramfs.cpio.gz"
log "initramfs: $BUILD/initramfs.cpio.gz"
