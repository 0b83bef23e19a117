#!/bin/sh
# summary.sh LOG...: adds up the last "N passed, N failed" line of each
# runner log, and the "#- name: OK|FAIL" lines of harness logs, into the
# one closing line CI reads.
passed=0 failed=0
for log in "$@"; do
	if grep -q '^#- ' "$log"; then
		p=$(grep -c '^#- [^ ]*: OK' "$log")
		f=$(grep -c '^#- [^ ]*: FAIL' "$log")
	else
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
		[ -n "$line" ] || { echo "summary: $log has no result line"; failed=$((failed + 1)); continue; }
		p=${line%% passed*}
		f=${line#*, }
		f=${f%% failed*}
	fi
	printf '  %-40s %4d passed, %d failed\n' "$(basename "$log")" "$p" "$f"
	passed=$((passed + p))
	failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
