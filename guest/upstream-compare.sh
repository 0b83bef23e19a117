#!/bin/bash
# Judges upstream's test_progs, test by test:
#   upstream-compare.sh BASE_LOG PATCHED_LOG TEST...   patched against base
#   upstream-compare.sh --one LOG TEST...              one kernel (the debug one)
#
# Each log must come from a guest that ran test_progs to its end: no panic,
# hang or timeout, no kernel bug in the log (check-log.sh), and test_progs'
# "Summary:" line.  A TEST is OK when the patched kernel passes it with at
# least the subtests base passes; it fails when the patched kernel fails it,
# skips it, leaves it out, or passes fewer subtests than base.  A test base
# fails too is still a failure here: it must be explained and fixed, not
# counted.  With --one, every TEST and every subtest it ran must pass.  Prints a line per test, the
# test_progs summary and the "N passed, N failed" line CI reads.
set -o pipefail
if [ "$1" = --one ]; then
	base_log= patched_log=$2
	shift 2
else
	base_log=$1 patched_log=$2
	shift 2
fi
here=$(dirname "$0")
failed=0 passed=0 n=0

for log in $base_log "$patched_log"; do
	"$here/check-log.sh" "$log" test_progs || exit 1
done

# the lines test_progs printed in LOG for TEST's subtests (-s) or itself
lines() {
	sed -n '/^=== GUEST START/,/^=== GUEST END/p' "$1" | grep -E "^#[0-9]+$3 +$2$4"
}
# result LOG TEST: OK, SKIP, FAIL, or "missing"
result() {
	local r
	r=$(lines "$1" "$2" "" ':(OK|SKIP|FAIL)$' | sed -E 's/.*:(OK|SKIP|FAIL)$/\1/' | tail -n 1)
	echo "${r:-missing}"
}
subtests() {	# LOG TEST [OK]: how many subtests ran (passed)
	[ -n "$1" ] || { echo 0; return; }
	lines "$1" "$2" '/[0-9]+' "/.*:(${3:-OK|SKIP|FAIL})\$" | wc -l
}

for t in "$@"; do
	n=$((n + 1))
	b=OK
	[ -n "$base_log" ] && b=$(result "$base_log" "$t")
	p=$(result "$patched_log" "$t")
	bs=$(subtests "$base_log" "$t" OK) ball=$(subtests "$base_log" "$t")
	ps=$(subtests "$patched_log" "$t" OK) pall=$(subtests "$patched_log" "$t")
	if [ -n "$base_log" ]; then
		detail="base $b, patched $p"
		[ $((ball + pall)) -gt 0 ] &&
			detail="$detail; subtests passed: base $bs of $ball, patched $ps of $pall"
	else
		detail=$p
		[ "$pall" -gt 0 ] && detail="$detail; subtests passed: $ps of $pall"
	fi
	# alone, every subtest that ran must pass; against base, what base passes
	[ -n "$base_log" ] || bs=$pall
	if [ "$p" = OK ] && [ "$ps" -ge "$bs" ]; then
		verdict=OK
		passed=$((passed + 1))
	else
		verdict=FAIL
		failed=$((failed + 1))
	fi
	echo "#$n upstream/$t: $verdict ($detail)"
done
echo "Summary: $passed/$n PASSED, 0 SKIPPED, $failed FAILED"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
