#!/bin/sh
# check-config.sh FRAGMENT DOTCONFIG: every option the fragment sets (or
# unsets) must be so in the final .config; olddefconfig drops options whose
# dependencies are missing without a word.
fragment=$1 config=$2 bad=0
for opt in $(sed -n 's/^\(CONFIG_[A-Za-z0-9_]*=.*\)$/\1/p' "$fragment"); do
	grep -qxF "$opt" "$config" || { echo "config: $opt asked for, but not set"; bad=1; }
done
for name in $(sed -n 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1/p' "$fragment"); do
	grep -q "^$name=" "$config" && { echo "config: $name asked off, but set"; bad=1; }
done
[ $bad = 0 ] || echo "config: $config does not match $fragment"
exit $bad
