#!/bin/sh
# Judges a guest's serial log: check-log.sh LOG [runner|command|test_progs]
#
# Reads between "=== GUEST START" and "=== GUEST END rc=N ===".  Fails,
# naming the cause and pointing at the log, when the guest never reached
# /init, when the end marker is missing (panic, hang, timeout), when the
# command exited non-zero, when the kernel log shows a bug (log-patterns),
# or, for the runner, when its "N passed, N failed" line is missing, says
# nothing passed, or counts a failure.  For upstream's test_progs it asks
# only that the run ended with test_progs' "Summary:" line: which tests
# failed is for guest/upstream-compare.sh to judge.
log=$1
mode=${2:-runner}
patterns=$(dirname "$0")/log-patterns
allowed=$(mktemp)
trap 'rm -f "$allowed"' EXIT
grep -v -e '^#' -e '^$' "$(dirname "$0")/log-allowed" > "$allowed"

fail() {
	echo "FAIL: $*"
	echo "      log: $log"
	exit 1
}
# The first kernel crash report in the log, to name the cause.
crash() {
	grep -m 1 -E 'Kernel panic|BUG:|Oops|general protection fault|kernel BUG at' "$log"
}

[ -r "$log" ] || fail "no log"
grep -q '^=== GUEST START' "$log" ||
	fail "the guest never reached /init: $(crash; grep -m1 "^launcher:" "$log")"
body=$(sed -n '/^=== GUEST START/,/^=== GUEST END/p' "$log")
end=$(printf '%s\n' "$body" | grep -m 1 '^=== GUEST END rc=')
if [ -z "$end" ]; then
	why=$(crash)
	[ -n "$why" ] || why=$(grep -m1 '^launcher:' "$log")
	fail "no end marker: ${why:-the guest stopped without one}"
fi
bad=$(printf '%s\n' "$body" | grep -F -f "$patterns" | grep -v -F -f "$allowed" | head -n 5)
[ -z "$bad" ] || fail "kernel log reports a bug:
$bad"
rc=${end#=== GUEST END rc=}
rc=${rc%% *}
if [ "$mode" = runner ]; then
	counts=$(printf '%s\n' "$body" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	[ -n "$counts" ] || fail "the runner printed no \"N passed, N failed\" line (rc=$rc)"
	passed=${counts%% passed*}
	failed=${counts#*, }
	failed=${failed%% failed*}
	if [ "$failed" != 0 ]; then
		fail "$failed failed: $(printf '%s\n' "$body" | grep -E '^#[0-9/]+ .*: FAIL' | tr '\n' ' ')"
	fi
	[ "$passed" -gt 0 ] || fail "no test passed"
	[ "$rc" = 0 ] || fail "the runner exited $rc"
	echo "PASS: $counts ($log)"
elif [ "$mode" = test_progs ]; then
	summary=$(printf '%s\n' "$body" | grep -E '^Summary: [0-9]+/[0-9]+ PASSED' | tail -n 1)
	[ -n "$summary" ] || fail "test_progs printed no \"Summary:\" line (rc=$rc)"
	echo "PASS: test_progs ran to its end: $summary ($log)"
else
	[ "$rc" = 0 ] || fail "the guest command exited $rc"
	echo "PASS: guest command exited 0 ($log)"
fi
