#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's own build of the base: the kernel of linux-image-VERSION+deb12-amd64
# (unsigned), VERSION the one of the pinned linux-source-6.12 (PIN_VERSION),
# unpacked into $BUILD/debian-kernel/ and not installed. It is the
# unpatched kernel of the test command's base boot (perf's fallback from
# fp,defer to fp, and Debian's perf on a kernel without the series): the
# kernel a distribution user runs before the series, built from the same
# source with Debian's configuration, at no build cost here.
#   debian-kernel.sh     prints the path of its bzImage
. "$(dirname "$0")/lib.sh"

upstream=${PIN_VERSION%%-*}		# 6.12.117
pkg=linux-image-$upstream+deb12-amd64-unsigned
dir=$BUILD/debian-kernel
kernel=$dir/boot/vmlinuz-$upstream+deb12-amd64
if [ ! -f "$kernel" ]; then
	rm -rf "$dir"
	mkdir -p "$dir/deb"
	# Into the current directory; as root, not as _apt, which may not
	# write there.
	(cd "$dir/deb" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$PIN_VERSION") >&2 ||
		die "cannot download $pkg=$PIN_VERSION (apt-get update first?)"
	dpkg-deb -x "$dir"/deb/*.deb "$dir" || die "cannot unpack $pkg"
	rm -rf "$dir/deb" "$dir/lib/modules"
fi
[ -f "$kernel" ] || die "no kernel in $pkg"
echo "$kernel"
