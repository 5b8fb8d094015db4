# SPDX-License-Identifier: GPL-2.0
# Sourced by main_perf.sh and bench.sh.
#
# perf_bytes PERF FILE: "S D SB DB", the number of samples and of deferred
# callchain records in the perf.data FILE and the bytes of each kind, read
# from the record sizes that PERF report -D prints.
perf_bytes() {
	"$1" report -D --no-inline -i "$2" 2>/dev/null | awk '
		function hex(x,   i, v) {
			v = 0
			for (i = 1; i <= length(x); i++)
				v = v * 16 + index("0123456789abcdef", substr(x, i, 1)) - 1
			return v
		}
		/PERF_RECORD_SAMPLE\(/ || /PERF_RECORD_CALLCHAIN_DEFERRED/ {
			if (match($0, /\[0x[0-9a-f]+\]/)) {
				b = hex(substr($0, RSTART + 3, RLENGTH - 4))
				if (index($0, "PERF_RECORD_SAMPLE")) { s++; sb += b }
				else { d++; db += b }
			}
		}
		END { printf "%d %d %d %d\n", s, d, sb, db }'
}
