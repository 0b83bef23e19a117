#!/bin/sh
# churn-table.sh LOG...: the "churn: before|after key=value" lines of each
# guest log (one per kernel), side by side; "-" where a kernel has no such
# counter (the pack statistics are the patched kernel's).
awk '
FNR == 1 { k++; name[k] = FILENAME; sub(/.*\//, "", name[k]); sub(/\.log$/, "", name[k]) }
/^churn: (before|after) / {
	for (i = 3; i <= NF; i++) {
		split($i, kv, "=")
		if (!(kv[1] in seen)) { seen[kv[1]] = 1; keys[++nk] = kv[1] }
		val[k, $2, kv[1]] = kv[2]
		have[k] = 1
	}
}
END {
	printf "%-16s", ""
	for (j = 1; j <= k; j++) printf " %32s", name[j] (have[j] ? "" : " (no data)")
	printf "\n%-16s", "metric"
	for (j = 1; j <= k; j++) printf " %10s %10s %10s", "before", "after", "delta"
	printf "\n"
	for (i = 1; i <= nk; i++) {
		key = keys[i]
		printf "%-16s", key
		for (j = 1; j <= k; j++) {
			if (!((j, "after", key) in val))	# not on this kernel
				printf " %10s %10s %10s", "-", "-", "-"
			else if (key == "us_per_load")
				printf " %10s %10s %10s", "", val[j, "after", key], ""
			else
				printf " %10s %10s %+10d", val[j, "before", key], val[j, "after", key],
				       val[j, "after", key] - val[j, "before", key]
		}
		printf "\n"
	}
}' "$@"
