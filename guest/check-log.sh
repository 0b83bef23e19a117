#!/bin/sh
# Judges a guest's serial log:
#   check-log.sh LOG [runner [EXPECT] | command | test_progs]
#   check-log.sh LOG results    prints the runner's results as EXPECT lists
#                               them (how a guest/expect/ list is made)
#
# Fails, naming the cause and pointing at the log, when the guest never
# reached /init, when the end marker is missing (panic, hang, timeout),
# when the command exited non-zero, when any line of the log (boot
# messages and shutdown included) shows a bug (guest/log-patterns less
# guest/log-allowed), or, for the runner, when its "N passed, N failed"
# line is missing, says nothing passed, or counts a failure.  With EXPECT
# (guest/expect/BOOT), the runner's "name: OK|SKIP" lines, tests and
# subtests, must be exactly those the file lists, so that a test that
# starts skipping, or stops running, fails the boot.  For upstream's
# test_progs it asks only that the run ended with test_progs' "Summary:"
# line: which tests failed is for guest/upstream-compare.sh to judge.
log=$1
mode=${2:-runner}
expect=$3
dir=$(dirname "$0")
allowed=$(mktemp) want=$(mktemp) seen=$(mktemp)
trap 'rm -f "$allowed" "$want" "$seen"' EXIT
grep -v -e '^#' -e '^$' "$dir/log-allowed" > "$allowed"

fail() {
	echo "FAIL: $*"
	echo "      log: $log"
	exit 1
}
[ -r "$log" ] || fail "no log"
# The log, with each kernel line that the console printed into the middle
# of another ("#1 bad_input: O[    4.564993] CONFIG_BPF_JIT_ALWAYS_ON is
# enabled...", then "K") on a line of its own, and the line it cut whole
# again: the kernel's printk and the runner's writes share the serial port.
text=$(awk '{
	if (substr($0, 1, 1) != "[" && match($0, /\[ *[0-9]+\.[0-9]+\] /)) {
		head = substr($0, 1, RSTART - 1)
		print substr($0, RSTART)
		if ((getline rest) > 0)
			print head rest
		else
			print head
		next
	}
	print
}' "$log")
# The kernel's lines (PRINTK_TIME: "[    1.234567] ...") that report a
# bug, the first five.  The tests' own output may quote a pattern.
bugs() {
	printf '%s\n' "$text" | grep -a -E '^\[ *[0-9]+\.[0-9]+\] ' | grep -F -f "$dir/log-patterns" |
		grep -v -F -f "$allowed" | head -n 5
}

body=$(printf '%s\n' "$text" | sed -n '/^=== GUEST START/,/^=== GUEST END/p')
# The runner's "#N[/M] name: OK|SKIP|FAIL (note)" lines as "name: RESULT".
results() {
	printf '%s\n' "$body" | sed -n -E 's/^#[0-9]+(\/[0-9]+)? ([^ ]+): (OK|SKIP|FAIL).*/\2: \3/p'
}
if [ "$mode" = results ]; then
	results
	exit
fi
[ -n "$body" ] ||
	fail "the guest never reached /init: $(bugs | head -n 1; grep -m1 "^launcher:" "$log")"
end=$(printf '%s\n' "$body" | grep -m 1 '^=== GUEST END rc=')
if [ -z "$end" ]; then
	why=$(bugs | head -n 1)
	[ -n "$why" ] || why=$(grep -m1 '^launcher:' "$log")
	fail "no end marker: ${why:-the guest stopped without one}"
fi
bad=$(bugs)
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
		fail "$failed failed: $(printf '%s\n' "$body" | grep -E '^#[0-9/]+ .*: FAIL' | tr '\n' ' ')
$(printf '%s\n' "$body" | grep -E '^[^ ]+:[0-9]+: .*: FAIL: ' | head -n 5)"
	fi
	[ "$passed" -gt 0 ] || fail "no test passed"
	[ "$rc" = 0 ] || fail "the runner exited $rc"
	if [ -n "$expect" ]; then
		[ -r "$expect" ] || fail "no list of expected results $expect"
		grep -v -e '^#' -e '^$' "$expect" | sort > "$want"
		results | sort > "$seen"
		diff=$(diff "$want" "$seen" | sed -n -e 's/^< /    expected, not seen: /p' \
			-e 's/^> /    seen, not expected: /p')
		[ -z "$diff" ] || fail "results differ from $expect:
$diff"
		counts="$counts, as $(basename "$expect") expects"
	fi
	echo "PASS: $counts ($log)"
elif [ "$mode" = test_progs ]; then
	summary=$(printf '%s\n' "$body" | grep -E '^Summary: [0-9]+/[0-9]+ PASSED' | tail -n 1)
	[ -n "$summary" ] || fail "test_progs printed no \"Summary:\" line (rc=$rc)"
	echo "PASS: test_progs ran to its end: $summary ($log)"
else
	[ "$rc" = 0 ] || fail "the guest command exited $rc"
	echo "PASS: guest command exited 0 ($log)"
fi
