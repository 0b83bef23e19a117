#!/bin/sh
# check-config.sh FRAGMENT DOTCONFIG: every option the fragment sets (or
# unsets) must be so in the final .config; olddefconfig drops options whose
# dependencies are missing without a word.
#
# check-config.sh --hardening LIST ORIGINAL DOTCONFIG: every option of
# ORIGINAL that a pattern of LIST (guest/hardening) names and that is built
# in (=y) must be built in in DOTCONFIG too, unless LIST excuses it
# ("!NAME reason").  Prints what it kept and what it excused.
if [ "$1" = --hardening ]; then
	list=$2 orig=$3 config=$4 kept=0 bad=0
	re=$(grep -v -e '^#' -e '^!' -e '^$' "$list" | paste -sd '|')
	for opt in $(grep -E "^($re)=y$" "$orig"); do
		name=${opt%%=*}
		why=$(sed -n "s/^!$name //p" "$list")
		if grep -qxF "$opt" "$config"; then
			kept=$((kept + 1))
		elif [ -n "$why" ]; then
			echo "hardening: $name is off: $why"
		else
			echo "hardening: $opt in $orig, but not in $config"
			bad=1
		fi
	done
	[ $kept -gt 0 ] || { echo "hardening: no option of $list in $orig"; bad=1; }
	[ $bad = 0 ] && echo "hardening: all $kept built-in hardening and mitigation options of $orig kept"
	exit $bad
fi
fragment=$1 config=$2 bad=0
for opt in $(sed -n 's/^\(CONFIG_[A-Za-z0-9_]*=.*\)$/\1/p' "$fragment"); do
	grep -qxF "$opt" "$config" || { echo "config: $opt asked for, but not set"; bad=1; }
done
for name in $(sed -n 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1/p' "$fragment"); do
	grep -q "^$name=" "$config" && { echo "config: $name asked off, but set"; bad=1; }
done
[ $bad = 0 ] || echo "config: $config does not match $fragment"
exit $bad
