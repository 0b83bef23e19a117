#!/bin/bash
# The record of the debug kernel's last passing run, guest/debug-tested:
#   debug-stamp.sh write LOG INPUTS...   after a pass: the hash of INPUTS,
#                                        the date, and the run's results
#   debug-stamp.sh check INPUTS...       0 if the record is of these INPUTS
# The debug suite is too slow for every CI run; CI runs it when check fails.
set -eo pipefail
stamp=$(dirname "$0")/debug-tested
cmd=$1
shift
if [ "$cmd" = write ]; then
	log=$1
	shift
fi
hash=$(cat "$@" | sha256sum | cut -c1-16)

case "$cmd" in
check)
	[ "$(sed -n 3p "$stamp" 2>/dev/null)" = "$hash" ] || exit 1
	echo "debug kernel: the suite passed on these inputs, $(sed -n 4p "$stamp")"
	;;
write)
	{
		echo "# make test-debug passed on these inputs; the next line is the"
		echo "# sha256 (16 digits) of: $*"
		echo "$hash"
		echo "$(date -u '+%F %H:%M UTC'), $(cat build/source-version):"
		grep -a -E '^#[0-9]+ |^#[0-9]+/[0-9]+ .*\(' "$log"
		grep -a -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1
	} > "$stamp"
	echo "  STAMP   $stamp"
	;;
*)
	echo "usage: $0 write LOG INPUTS... | check INPUTS..." >&2
	exit 2
	;;
esac
