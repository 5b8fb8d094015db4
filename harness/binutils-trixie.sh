#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian 13 (trixie)'s binutils 2.44, which emits SFrame version 2, run from
# an extracted tree on this Debian 12 machine (it does not install here as
# a package). Downloads from Debian's registry once into $BUILD/trixie and
# prints a directory to pass to gcc -B, whose as and ld are 2.44's.
# trixie is a stable release: its binutils does not move from day to day.
. "$(dirname "$0")/lib.sh"

dir=$BUILD/trixie
bin=$dir/bin
if [ ! -x "$bin/ld" ]; then
	rm -rf "$dir"
	mkdir -p "$dir/lists" "$dir/dl" "$dir/root" "$bin"
	echo "deb http://deb.debian.org/debian trixie main" > "$dir/sources.list"
	apt=(-o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
	     -o Dir::State::Lists="$dir/lists" -o Dir::State::status=/dev/null
	     -o Debug::NoLocking=1 -qq)
	apt-get "${apt[@]}" update >&2 || die "apt-get update (trixie) failed"
	(cd "$dir/dl" && apt-get "${apt[@]}" download binutils-x86-64-linux-gnu \
		libbinutils libctf0 libctf-nobfd0 libsframe1 libzstd1 zlib1g libc6 \
		libjansson4 >&2 2>/dev/null) || die "downloading trixie's binutils failed"
	for d in "$dir"/dl/*.deb; do
		dpkg-deb -x "$d" "$dir/root"
	done
	# Run them with trixie's own libc and loader.
	for t in as ld readelf; do
		real=x86_64-linux-gnu-$t
		[ "$t" != ld ] || real=x86_64-linux-gnu-ld.bfd
		printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' \
			"$dir/root/usr/lib64/ld-linux-x86-64.so.2" \
			"$dir/root/usr/lib/x86_64-linux-gnu" \
			"$dir/root/usr/bin/$real" > "$bin/$t"
		chmod +x "$bin/$t"
	done
	"$bin/as" --version | head -n 1 >&2
fi
echo "$bin"
