#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install everything the harness needs from Debian's registry.
. "$(dirname "$0")/lib.sh"

PKGS="build-essential bc bison flex libelf-dev libssl-dev cpio qemu-system-x86
      busybox-static ccache python3 python3.11 python3-ply python3-git gcc-multilib git rsync kmod perl
      linux-perf libdw-dev libtraceevent-dev liblzma-dev libbz2-dev libzstd-dev zlib1g-dev
      trace-cmd clang-14 libclang-rt-14-dev lld-14
      libbpf-dev bpftool dwarves
      chromium golang-go golang-github-google-pprof-dev python3-protobuf protobuf-compiler
      ${EXTRA_PKGS:-}"
# Node.js and npm fetch d3-flame-graph for the main job's report; a machine
# may have them from elsewhere than Debian's packages.
command -v npm >/dev/null 2>&1 || PKGS="$PKGS nodejs npm"

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

# The report's JavaScript (harness/report/package-lock.json pins it): the
# flame graph library and d3, from the npm registry, into $BUILD/npm.
npm_dir=$BUILD/npm
if ! cmp -s "$REPO/harness/report/package-lock.json" "$npm_dir/package-lock.json" ||
   [ ! -f "$npm_dir/node_modules/d3-flame-graph/package.json" ]; then
	mkdir -p "$npm_dir"
	cp "$REPO/harness/report/package.json" "$REPO/harness/report/package-lock.json" "$npm_dir/"
	(cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
		die "npm ci in $npm_dir failed"
	log "npm: d3-flame-graph $(node -p 'require(process.argv[1]).version' \
		"$npm_dir/node_modules/d3-flame-graph/package.json")"
fi
