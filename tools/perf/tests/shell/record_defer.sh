#!/bin/bash
# perf record --call-graph fp,defer tests (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# Record the unwind demo, whose chain under read() is known exactly:
#   leaf <- level (x DEPTH) <- run <- main
# On a kernel with deferred user callchains, check that perf script shows
# that chain after the kernel frames of the samples, that the deferred
# records and their cookies show with --no-merge-callchains and in
# perf report -D. On a kernel without them, check that perf record says it
# falls back to --call-graph fp, once, and records ordinary callchains.
#
# UNWIND_DEMO: path of the demo (default /tests/bin/unwind_demo), built
# from the harness's unwind_demo.c with frame pointers.
# UNWIND_DEMO_SFRAME: the same demo built as GCC does by default at -O2,
# without frame pointers, with an SFrame section (-Wa,--gsframe); default
# /tests/bin/unwind_demo_sframe. With it, fp,defer must give the demo's
# exact chain, and plain fp must not: that is what deferral adds.

set -e

demo=${UNWIND_DEMO:-/tests/bin/unwind_demo}
depth=4
demo_args="-d ${depth} -n 200 -s 1048576"
fallback_msg="Deferred user callchains not supported by the kernel, falling back to --call-graph fp"

err=0
perfdata=$(mktemp /tmp/__perf_test.perf.data.XXXXXX)
perfout=$(mktemp /tmp/__perf_test.perf.out.XXXXXX)
perferr=$(mktemp /tmp/__perf_test.perf.err.XXXXXX)

cleanup() {
  rm -f "${perfdata}" "${perfdata}".old "${perfout}" "${perferr}"
  trap - EXIT TERM INT
}

trap_cleanup() {
  cleanup
  exit 1
}
trap trap_cleanup EXIT TERM INT

if [ ! -x "${demo}" ]
then
  echo "Skip: no unwind demo at ${demo} (set UNWIND_DEMO)"
  cleanup
  exit 2
fi

if ! perf record -o /dev/null -e cpu-clock -c 100000 -- true > /dev/null 2>&1
then
  echo "Skip: cannot record cpu-clock"
  cleanup
  exit 2
fi

# The demo's chain, innermost first, as perf script -F sym prints it.
expected_chain() {
  local n=0

  echo leaf
  while [ ${n} -lt ${depth} ]
  do
    echo level
    n=$((n + 1))
  done
  echo run
  echo main
}
expected=$(expected_chain | tr '\n' ' ')

# Read perf script -F comm,tid,ip,sym output on stdin. For every sample or
# deferred record of the demo, print one line: its kind ("sample" or
# "record"), the number of kernel frames, then its user frames, innermost
# first, or "-" if it has none. Fail if a kernel frame follows a user one.
summarize() {
  awk -v demo_comm="${demo_comm:-unwind_demo}" '
    function flush() {
      if (comm == demo_comm)
        printf "%s %d%s\n", kind, nk, nu ? users : " -"
      comm = ""
    }
    /^[^\t]/ {
      flush()
      comm = $1
      kind = /PERF_RECORD_CALLCHAIN_DEFERRED/ ? "record" : "sample"
      nk = 0; nu = 0; users = ""
      next
    }
    /^\t/ {
      # Kernel addresses: ffff followed by 12 hex digits
      if (length($1) == 16 && substr($1, 1, 4) == "ffff") {
        if (nu) {
          print "kernel frame after user frames in a sample of " comm > "/dev/stderr"
          bad = 1
        }
        nk++
      } else {
        nu++
        users = users " " $2
      }
      next
    }
    /^$/ { flush() }
    END { flush(); exit bad }
  '
}

check_merged() {
  echo "Merged callchains test"
  if ! perf script -i "${perfdata}" -F comm,tid,ip,sym > "${perfout}" 2> /dev/null
  then
    echo "Merged callchains test [Failed perf script]"
    err=1
    return
  fi
  # Samples in the kernel, under read(): the user part must be the demo's
  # chain. A page fault on full()'s code may put full() first.
  if ! summarize < "${perfout}" | awk -v expected="${expected}" '
    $1 == "sample" && $2 > 0 && / leaf( |$)/ {
      users = ""
      for (i = 3; i <= NF; i++)
        users = users $i " "
      sub(/^full /, "", users)
      if (substr(users, 1, length(expected)) == expected) {
        good++
      } else {
        print "unexpected user frames: " users
        bad++
      }
    }
    END {
      printf "%d merged samples under read(), %d wrong\n", good, bad
      exit bad || !good
    }'
  then
    echo "Merged callchains test [Failed: expected kernel frames then ${expected}]"
    err=1
    return
  fi
  echo "Merged callchains test [Success]"
}

check_unmerged() {
  echo "Unmerged callchains test"
  if ! perf script -i "${perfdata}" --no-merge-callchains -F comm,tid,time,ip,sym \
       > "${perfout}" 2> /dev/null
  then
    echo "Unmerged callchains test [Failed perf script]"
    err=1
    return
  fi
  if ! grep -q -E "PERF_RECORD_CALLCHAIN_DEFERRED cookie: 0x[0-9a-f]+ nr: [0-9]+$" "${perfout}"
  then
    echo "Unmerged callchains test [Failed: no deferred record with its cookie]"
    err=1
    return
  fi
  # The records carry the demo's chain; the samples keep their kernel part.
  if ! summarize < "${perfout}" | awk -v expected="${expected}" '
    $1 == "record" {
      users = ""
      for (i = 3; i <= NF; i++)
        users = users $i " "
      if (substr(users, 1, length(expected)) == expected)
        records++
    }
    $1 == "sample" && / leaf( |$)/ { samples++ }
    END {
      printf "%d records with the demo chain, %d samples with user frames\n",
             records, samples
      exit !records || samples
    }'
  then
    echo "Unmerged callchains test [Failed]"
    err=1
    return
  fi
  echo "Unmerged callchains test [Success]"
}

check_dump() {
  echo "Raw dump test"
  if ! perf report -i "${perfdata}" -D > "${perfout}" 2> /dev/null
  then
    echo "Raw dump test [Failed perf report -D]"
    err=1
    return
  fi
  if ! grep -q -E "PERF_RECORD_CALLCHAIN_DEFERRED: [0-9]+/[0-9]+: cookie: 0x[0-9a-f]+ nr: [0-9]+$" \
       "${perfout}"
  then
    echo "Raw dump test [Failed: no PERF_RECORD_CALLCHAIN_DEFERRED with a cookie]"
    err=1
    return
  fi
  # PERF_CONTEXT_USER_DEFERRED in the sampled callchains
  if ! grep -q -E "^\.\.\.\.\. +[0-9]+: fffffffffffffd80$" "${perfout}"
  then
    echo "Raw dump test [Failed: no PERF_CONTEXT_USER_DEFERRED in the samples]"
    err=1
    return
  fi
  echo "Raw dump test [Success]"
}

# Of the demo's samples under read(), print how many have the whole chain
# and how many there are, from perf script output on stdin.
complete_share() {
  summarize | awk -v expected="${expected}" '
    $1 == "sample" && $2 > 0 && / leaf( |$)/ {
      users = ""
      for (i = 3; i <= NF; i++)
        users = users $i " "
      sub(/^full /, "", users)
      total++
      if (substr(users, 1, length(expected)) == expected)
        good++
    }
    END { printf "%d %d\n", good, total }'
}

check_sframe() {
  local sdemo=${UNWIND_DEMO_SFRAME:-/tests/bin/unwind_demo_sframe}
  local good total

  echo "No frame pointers (SFrame) test"
  if [ ! -x "${sdemo}" ]
  then
    echo "No frame pointers (SFrame) test [Skipped: no ${sdemo}]"
    return
  fi
  # The task's comm: the file name, cut to 15 characters.
  demo_comm=$(basename "${sdemo}" | cut -c1-15)
  for mode in fp,defer fp
  do
    # shellcheck disable=SC2086
    if ! perf record -o "${perfdata}" --call-graph ${mode} -e cpu-clock -c 100000 \
         -- "${sdemo}" ${demo_args} > /dev/null 2> "${perferr}"
    then
      echo "No frame pointers (SFrame) test [Failed: perf record --call-graph ${mode}]"
      err=1
      return
    fi
    # shellcheck disable=SC2046
    set -- $(perf script -i "${perfdata}" -F comm,tid,ip,sym 2> /dev/null | complete_share)
    good=$1
    total=$2
    echo "--call-graph ${mode}: ${good} of ${total} samples under read() have the whole chain"
    if [ "${mode}" = fp,defer ] && { [ "${total}" -eq 0 ] || [ "${good}" -ne "${total}" ]; }
    then
      echo "No frame pointers (SFrame) test [Failed: fp,defer must give every sample ${expected}]"
      err=1
      return
    fi
    if [ "${mode}" = fp ] && [ "${good}" -ne 0 ]
    then
      echo "No frame pointers (SFrame) test [Failed: fp walked code without frame pointers]"
      err=1
      return
    fi
  done
  demo_comm=
  echo "No frame pointers (SFrame) test [Success]"
}

check_fallback() {
  echo "Fallback test"
  if [ "$(grep -c -F "${fallback_msg}" "${perferr}")" != "1" ]
  then
    echo "Fallback test [Failed: expected the fallback message once]"
    cat "${perferr}"
    err=1
    return
  fi
  if perf evlist -v -i "${perfdata}" 2> /dev/null | grep -q "defer_"
  then
    echo "Fallback test [Failed: defer bits still set]"
    err=1
    return
  fi
  if perf report -i "${perfdata}" -D 2> /dev/null | grep -q "PERF_RECORD_CALLCHAIN_DEFERRED"
  then
    echo "Fallback test [Failed: deferred records without deferral]"
    err=1
    return
  fi
  # Plain frame pointer callchains, walked in the interrupt
  if ! perf script -i "${perfdata}" -F comm,tid,ip,sym 2> /dev/null | summarize |
       grep -q "^sample .* leaf "
  then
    echo "Fallback test [Failed: no user callchain through leaf()]"
    err=1
    return
  fi
  echo "Fallback test [Success]"
}

echo "Recording ${demo} ${demo_args} with --call-graph fp,defer"
# shellcheck disable=SC2086
if ! perf record -o "${perfdata}" --call-graph fp,defer -e cpu-clock -c 100000 \
     -- "${demo}" ${demo_args} > /dev/null 2> "${perferr}"
then
  echo "Record [Failed]"
  cat "${perferr}"
  trap_cleanup
fi

if grep -q -F "${fallback_msg}" "${perferr}"
then
  echo "Kernel without deferred user callchains: checking the fallback to fp"
  check_fallback
else
  echo "Kernel with deferred user callchains: checking the deferred records"
  if ! perf evlist -v -i "${perfdata}" 2> /dev/null | grep -q "defer_callchain: 1"
  then
    echo "Record [Failed: no fallback message but no defer_callchain either]"
    err=1
  elif ! perf report -i "${perfdata}" --stats 2> /dev/null | grep -q "CALLCHAIN_DEFERRED events"
  then
    if ! grep -q -w cx16 /proc/cpuinfo
    then
      # The deferred unwinder needs cmpxchg16b; the kernel walks in place.
      echo "Skip: no deferred records, the CPU has no cmpxchg16b"
      cleanup
      exit 2
    fi
    echo "Record [Failed: no PERF_RECORD_CALLCHAIN_DEFERRED recorded]"
    err=1
  else
    check_merged
    check_unmerged
    check_dump
    check_sframe
  fi
fi

cleanup
exit $err
