#!/bin/bash
# perf script and report join a thread's context to its deferred callchains (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# The unwind demo's --context N mode registers its OpenTelemetry thread
# context (prctl(PR_UNWIND_CONTEXT)) and makes N getppid() calls; before
# call I (from 0) its record holds trace ID
# 4bf92f3577b34da6a3ce929d0e0e4736 and span ID I + 1, except that every
# fourth record (I % 4 == 3) is marked invalid. Record the getppid
# tracepoint with fp,defer and the kernel's unwind:unwind_user_context
# event, and check that perf script prints under the I-th sample, after
# the demo's frames, exactly the context of call I, and that perf report
# --span keeps exactly the samples of the spans asked for.
#
# UNWIND_DEMO: path of the demo (default /tests/bin/unwind_demo), built
# from the harness's unwind_demo.c with frame pointers.

set -e

demo=${UNWIND_DEMO:-/tests/bin/unwind_demo}
calls=8
event=/sys/kernel/tracing/events/unwind/unwind_user_context

if [ ! -x "${demo}" ] || [ ! -d "${event}" ]; then
  echo "Skip: needs ${demo} and a kernel with ${event}"
  exit 2
fi

err=0
perfdata=$(mktemp /tmp/__perf_test.perf.data.XXXXXX)
perfout=$(mktemp /tmp/__perf_test.perf.out.XXXXXX)

cleanup() {
  rm -f "${perfdata}" "${perfdata}".old "${perfout}"
  trap - EXIT TERM INT
}

trap_cleanup() {
  cleanup
  exit 1
}
trap trap_cleanup EXIT TERM INT

perf record -q --call-graph fp,defer --no-sframe-tables \
  -e syscalls:sys_enter_getppid -e unwind:unwind_user_context \
  -o "${perfdata}" -- "${demo}" --context ${calls}
perf script -i "${perfdata}" -F comm,event,ip,sym > "${perfout}"

# Each getppid sample: the demo's chain, then the context of its own call.
if ! awk -v CALLS=${calls} '
  function done() {
    if (!insample)
      return
    want = (n % 4 == 3) ? "context: status=invalid" : \
      sprintf("context: trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=%016x flags=0x01", n + 1)
    if (ctx != want) {
      printf "call %d: \"%s\", want \"%s\"\n", n, ctx, want
      bad = 1
    }
    if (chain !~ / ppid_c ppid_b ppid_a ppid_context /) {
      printf "call %d: chain%s\n", n, chain
      bad = 1
    }
    n++
    insample = 0
  }
  /^[^\t]/ && NF {
    done()
    if ($0 ~ /sys_enter_getppid/) {
      insample = 1
      chain = ""
      ctx = ""
    }
    next
  }
  insample && /^\tcontext: / { sub(/^\t/, ""); ctx = $0; next }
  insample && NF >= 2 { chain = chain " " $2 }
  END {
    done()
    if (n != CALLS) {
      printf "%d getppid samples, want %d\n", n, CALLS
      bad = 1
    }
    exit bad
  }' "${perfout}"; then
  echo "perf script did not join each sample to its own call's context"
  head -60 "${perfout}"
  err=1
fi

# perf report --span: one call's sample; "none" the invalid records' two.
count() {
  perf report -i "${perfdata}" --stdio --no-children -n -q --sort sym -g none \
    --span "$1" 2>/dev/null | awk '$2 ~ /^[0-9]+$/ { n += $2 } END { print n + 0 }'
}
for want in "0000000000000002 1" "0000000000000001,0000000000000005 2" "none 2"; do
  set -- ${want}
  got=$(count "$1")
  if [ "${got}" != "$2" ]; then
    echo "perf report --span $1: ${got} samples, want $2"
    err=1
  fi
done

cleanup
exit ${err}
