#!/bin/bash
# Records of slow suites' last passing runs (guest/debug-tested,
# guest/debian-tested, guest/cross-tested), which CI reruns only when what
# they tested changed:
#   stamp.sh write STAMP LOG INPUTS...   after a pass: the hash of INPUTS,
#                                        the date, and the run's results
#   stamp.sh check STAMP INPUTS...       0 if STAMP is a record of these INPUTS
set -eo pipefail
cmd=$1 stamp=$2
shift 2
if [ "$cmd" = write ]; then
	log=$1
	shift
fi
hash=$(cat "$@" | sha256sum | cut -c1-16)

case "$cmd" in
check)
	[ "$(sed -n 3p "$stamp" 2>/dev/null)" = "$hash" ] || exit 1
	echo "$(basename "$stamp"): passed on these inputs, $(sed -n 4p "$stamp")"
	;;
write)
	{
		echo "# A recorded pass (guest/stamp.sh); the next line is the"
		echo "# sha256 (16 digits) of: $*"
		echo "$hash"
		echo "$(date -u '+%F %H:%M UTC'), $(cat build/source-version):"
		grep -a -E '^### |^#[0-9]+ |^#[0-9]+/[0-9]+ .*\(|^cross: ' "$log"
		grep -a -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1
	} > "$stamp"
	echo "  STAMP   $stamp"
	;;
*)
	echo "usage: $0 write STAMP LOG INPUTS... | check STAMP INPUTS..." >&2
	exit 2
	;;
esac
