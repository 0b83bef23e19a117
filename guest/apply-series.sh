#!/bin/sh
# apply-series.sh PATCHDIR TREE: applies PATCHDIR/series in order, quilt
# style, and stops at the first patch that does not apply, naming it.
dir=$1 tree=$2 n=0
while read -r p; do
	case "$p" in '' | '#'*) continue ;; esac
	n=$((n + 1))
	[ -f "$dir/$p" ] || { echo "series: $dir/$p is listed but missing"; exit 1; }
	if ! out=$(patch -d "$tree" -p1 --forward --batch --no-backup-if-mismatch <"$dir/$p" 2>&1); then
		echo "series: patch $n, $p, does not apply to $tree:"
		echo "$out" | grep -iE 'fail|reject|error|malformed' | head -n 10
		exit 1
	fi
	echo "  PATCH   $p"
done <"$dir/series"
echo "  SERIES  $n patch(es) applied"
