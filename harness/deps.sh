#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install everything the harness needs from Debian's registry.
. "$(dirname "$0")/lib.sh"

PKGS="build-essential bc bison flex libelf-dev libssl-dev cpio qemu-system-x86
      busybox-static ccache python3 python3-ply python3-git gcc-multilib git rsync kmod perl
      linux-perf libdw-dev libtraceevent-dev liblzma-dev libbz2-dev libzstd-dev zlib1g-dev
      trace-cmd clang-14 libclang-rt-14-dev lld-14 ${EXTRA_PKGS:-}"

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
base_ok=
dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null | grep -q . && base_ok=1

if [ -n "$missing" ] || [ -z "$base_ok" ]; then
	log "installing:${missing} linux-source-6.12"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	[ -z "$missing" ] || apt-get install -y -qq $missing >/dev/null
fi

# The base: pinned, or the newest 6.12 if the pin left the registry.
have=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
if [ "$have" != "$PIN_VERSION" ]; then
	if apt-cache show "linux-source-6.12=$PIN_VERSION" >/dev/null 2>&1; then
		apt-get install -y -qq --allow-downgrades "linux-source-6.12=$PIN_VERSION" >/dev/null
	else
		echo "NOTE: pinned linux-source-6.12 $PIN_VERSION is gone from the registry; using the newest 6.12"
		[ -n "$have" ] || apt-get install -y -qq linux-source-6.12 >/dev/null
	fi
fi
log "base: linux-source-6.12 $(dpkg-query -W -f='${Version}' linux-source-6.12)"
