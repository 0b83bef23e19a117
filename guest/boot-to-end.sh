#!/bin/sh
# boot-to-end.sh [-s] NAME LOG: the direct map from guest/churn-fragmented's
# "churn-fragmented: boot" line to its "end" line in LOG, on one line named
# NAME.  With -s, exits 1 unless DirectMap4k and the live 2M and 1G splits
# are back at their boot values (a kernel that heals).
strict=0
[ "$1" = -s ] && { strict=1; shift; }
[ $# -eq 2 ] || { echo "usage: $0 [-s] NAME LOG" >&2; exit 2; }
awk -v k="$1" -v strict=$strict '
/^churn-fragmented: (boot|end) / {
	n++
	for (i = 3; i <= NF; i++) { split($i, kv, "="); v[$2, kv[1]] = kv[2] }
}
END {
	if (n != 2) { print "demo-fragmented: " k ": no boot and end lines"; exit 1 }
	printf "demo-fragmented: %s, from boot to everything freed (%d 2M splits made meanwhile): " \
	       "DirectMap4k %d -> %d kB (%+d), live 2M splits %d -> %d, 1G %d -> %d\n", k,
	       v["end", "l2_splits"] - v["boot", "l2_splits"], v["boot", "DirectMap4k_kB"],
	       v["end", "DirectMap4k_kB"], v["end", "DirectMap4k_kB"] - v["boot", "DirectMap4k_kB"],
	       v["boot", "live_l2_splits"], v["end", "live_l2_splits"],
	       v["boot", "live_l3_splits"], v["end", "live_l3_splits"]
	if (strict && (v["end", "DirectMap4k_kB"] > v["boot", "DirectMap4k_kB"] ||
		       v["end", "live_l2_splits"] > v["boot", "live_l2_splits"] ||
		       v["end", "live_l3_splits"] > v["boot", "live_l3_splits"])) {
		print "demo-fragmented: " k ": the direct map is not back where the boot left it"
		exit 1
	}
}' "$2"
