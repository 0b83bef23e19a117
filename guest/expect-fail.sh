#!/bin/sh
# expect-fail.sh NAME LOG MODE REGEX: the harness checks itself.  The log
# comes from a guest that was made to fail on purpose; check-log.sh must
# call it a failure, with a reason matching REGEX.  MODE "output": LOG is
# what another checker (guest/hibernate.sh) printed, and it must have said
# "FAIL:" for that reason.  Prints a runner-style result line for the
# harness log.
name=$1 log=$2 mode=$3 regex=$4
dir=$(dirname "$0")
judge() {
	if [ "$mode" = output ]; then
		grep '^FAIL:' "$log" || cat "$log"
		! grep -q '^FAIL:' "$log"
	else
		"$dir/check-log.sh" "$log" "$mode"
	fi
}
if out=$(judge); then
	echo "#- $name: FAIL (the checker passed a guest that should fail: $log)"
	exit 1
fi
if ! printf '%s\n' "$out" | grep -qE "$regex"; then
	echo "#- $name: FAIL (the checker failed it, but not for /$regex/):"
	printf '%s\n' "$out"
	exit 1
fi
echo "#- $name: OK ($(printf '%s\n' "$out" | grep -m 1 -E "$regex"))"
