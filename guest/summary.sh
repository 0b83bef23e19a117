#!/bin/sh
# summary.sh LOG...: adds up the last "N passed, N failed[, N skipped]" line
# of each runner log, and the "#- name: OK|FAIL" lines of harness logs, into
# the one closing line CI reads.  Skips are counted, not hidden: which ones
# a boot may have is for its guest/expect/ list (guest/check-log.sh).
passed=0 failed=0 skipped=0
for log in "$@"; do
	s=0
	if grep -q '^#- ' "$log"; then
		p=$(grep -c '^#- [^ ]*: OK' "$log")
		f=$(grep -c '^#- [^ ]*: FAIL' "$log")
	else
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
		[ -n "$line" ] || { echo "summary: $log has no result line"; failed=$((failed + 1)); continue; }
		p=${line%% passed*}
		f=${line#*, }
		f=${f%% failed*}
		case $line in
		*skipped*) s=${line##*failed, } s=${s%% skipped*} ;;
		esac
	fi
	printf '  %-40s %4d passed, %d failed, %d skipped\n' "$(basename "$log")" "$p" "$f" "$s"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
