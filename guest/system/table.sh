#!/bin/bash
# table.sh DEBIAN-LOG OURS-LOG: the real system's direct map on both kernels
# (make test-system), as a Markdown table: the payload's COUNTERS lines
# (guest/system/payload/run), a row per moment, the same workloads on the
# same disk.  "2M split" counts direct_map_level2_splits, "collapsed" the
# series' direct_map_level2_collapses, "live" the 2M entries split now.
set -eo pipefail
[ $# = 2 ] || { echo "usage: $0 DEBIAN-LOG OURS-LOG" >&2; exit 2; }
for log; do
	grep -a -q '^COUNTERS boot ' "$log" || { echo "table.sh: no COUNTERS in $log" >&2; exit 1; }
done
release() { sed -n 's/^=== GUEST START \([^ ]*\).*/\1/p' "$1" | tr -d '\r' | head -n 1; }
echo "| after | Debian's $(release "$1"): 2M split (live) | DirectMap4k | modules, BPF programs |" \
	"ours, $(release "$2"): 2M split / collapsed (live) | DirectMap4k | modules, BPF programs |"
echo "|---|---|---|---|---|---|---|"
awk '
	function val(line, key,    n, i, f) {
		n = split(line, f, " ")
		for (i = 1; i <= n; i++)
			if (index(f[i], key "=") == 1)
				return substr(f[i], length(key) + 2)
		return "?"
	}
	/^COUNTERS / {
		sub(/\r$/, "")
		w = $2
		if (!(w in seen)) { order[++n] = w; seen[w] = 1 }
		if (FILENAME == ARGV[1]) deb[w] = $0; else ours[w] = $0
	}
	END {
		name["boot"] = "boot (multi-user, udev settled)"
		name["systemd_bpf"] = "16 systemd units with IPAddressDeny=, 8 with DevicePolicy="
		name["bpf_lsm"] = "a BPF LSM program (lsm/file_open), 8 rounds"
		name["libbpf_tools"] = "9 libbpf-tools, 2 rounds"
		name["bpftrace_kfunc"] = "bpftrace kfunc/kretfunc"
		name["module_churn"] = "module churn (modprobe, modprobe -r)"
		name["final"] = "all unloaded and freed"
		for (i = 1; i <= n; i++) {
			w = order[i]; d = deb[w]; o = ours[w]
			printf "| %s | %s (%s) | %s kB | %s, %s | %s / %s (%s) | %s kB | %s, %s |\n",
				(w in name) ? name[w] : w,
				val(d, "split2"), val(d, "live2m"), val(d, "directmap4k"),
				val(d, "modules"), val(d, "progs"),
				val(o, "split2"), val(o, "collapse2"), val(o, "live2m"),
				val(o, "directmap4k"), val(o, "modules"), val(o, "progs")
		}
	}' "$1" "$2"
