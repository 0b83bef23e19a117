#!/bin/bash
# test-stamp.sh: guest/stamp.sh checks itself on made-up logs and inputs in
# a scratch directory (no kernel, no guest; a second or two).  A record
# must be written from a passing log and only from one, never for an
# overridden run or for inputs that changed while it ran; check must name
# what changed; a line moved from one input file to another must change
# the hash.  Prints a "#- name: OK|FAIL (...)" line per case, as
# guest/expect-fail.sh does, and exits 1 if any failed.  With -q, only the
# failures and one "#- stamp_records: OK|FAIL (N cases ...)" line, for a
# harness log that counts its "#-" lines (guest/summary.sh).
set -o pipefail
quiet=0
[ "$1" = -q ] && quiet=1
stamp=$(cd "$(dirname "$0")" && pwd)/stamp.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
export STAMP_BUILD=$tmp/build STAMP_MAKEFILE=$tmp/Makefile SRC_TAR=$tmp/src.tar.xz
export STAMP_RERUN='make test-fake'
unset STAMP_T0 STAMP_OVERRIDES
failed=0 cases=0

ok() {
	cases=$((cases + 1))
	[ "$quiet" = 1 ] || echo "#- stamp_$1: OK ($2)"
}
bad() {
	cases=$((cases + 1))
	echo "#- stamp_$1: FAIL ($2)"
	[ -z "$3" ] || printf '%s\n' "$3" | sed 's/^/      /'
	failed=1
}
# expect NAME RC REGEX CMD...: CMD must exit RC and print a line matching REGEX.
expect() {
	local name=$1 want=$2 regex=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" != "$want" ]; then
		bad "$name" "exit $rc, not $want" "$out"
	elif ! printf '%s\n' "$out" | grep -q -E -- "$regex"; then
		bad "$name" "no line matching /$regex/" "$out"
	else
		ok "$name" "$(printf '%s\n' "$out" | grep -E -m 1 -- "$regex" | sed 's/^ *//')"
	fi
}

mkdir -p build
echo 'linux-source-6.1 6.1.192-3, Linux 6.1.192' >build/source-version
echo tarball >src.tar.xz
printf 'suspected memory leak\nBUG:\n' >patterns
printf '# allowed\n' >allowed
echo 'int main(void) { return 0; }' >test.c
cat >Makefile <<'EOF'
test-fake: build/fake.img
	NUMA=2 run-it
	check-it

other: x
	true
EOF
inputs=(patterns allowed test.c rule:test-fake tool:bash 'NUMA_NODES=2 4')

good_log() {
	cat <<'EOF'
[    0.000000] Linux version 6.1.192
=== GUEST START
#1 bad_input: OK
#2/1 churn/rounds: OK (8 rounds)
#2/2 churn/splits: SKIP (no 1G pages)
#2 churn: OK
Summary: 2/1 PASSED, 1 SKIPPED, 0 FAILED
2 passed, 0 failed, 1 skipped
=== GUEST END rc=0 ===
launcher: tcg-multi guest, 2G, 2 vCPUs, 2 nodes, 1119 s
EOF
}

# --- a good run writes a record, which check and verify accept -----------------
good_log >run.log
"$stamp" begin guest-tested "${inputs[@]}" >/dev/null
good_log >run.log
expect write_passing_log 0 'STAMP +guest-tested' "$stamp" write guest-tested run.log "${inputs[@]}"
if grep -q '^format: 2$' guest-tested && grep -q '^launcher: tcg-multi' guest-tested &&
   grep -q '^#2/2 churn/splits: SKIP' guest-tested && grep -q '^2 passed, 0 failed, 1 skipped$' guest-tested &&
   grep -q "^log: $(sha256sum <run.log | cut -d' ' -f1)  run.log$" guest-tested &&
   grep -q '^[0-9a-f]\{64\}  test.c$' guest-tested && grep -q '^var NUMA_NODES: 2 4$' guest-tested; then
	ok record_has_inputs_launcher_results "per-file hashes, variables, launcher line, every result line, log sha256"
else
	bad record_has_inputs_launcher_results "a line is missing" "$(cat guest-tested)"
fi
cp guest-tested good-record
expect check_current 0 'passed on these inputs' "$stamp" check guest-tested "${inputs[@]}"
expect verify_with_log 0 'verified' "$stamp" verify guest-tested run.log
expect begin_is_used_once 1 'not taken at the start' "$stamp" write guest-tested run.log "${inputs[@]}"

# --- what write refuses ------------------------------------------------------
refused() { # NAME REGEX CMD...: refused, and the record is as it was
	expect "$@"
	cmp -s guest-tested good-record || { bad "$1_kept_record" "the record changed"; cp good-record guest-tested; }
}
# refused_log NAME REGEX LOG: a run (begin) whose LOG write refuses
refused_log() {
	"$stamp" begin guest-tested "${inputs[@]}" >/dev/null
	refused "$1" 1 "$2" "$stamp" write guest-tested "$3" "${inputs[@]}"
}
refused_log refuses_dev_null 'not a readable file' /dev/null
: >empty.log
refused_log refuses_empty_log 'the log is empty' empty.log
good_log | grep -v '^=== GUEST END' >noend.log
refused_log refuses_no_end_marker 'no "=== GUEST END rc=0" marker' noend.log
good_log | sed 's/^2 passed, 0 failed/1 passed, 1 failed/; s/^#1 bad_input: OK/#1 bad_input: FAIL/' >failed.log
refused_log refuses_failed_test 'failure: #1 bad_input: FAIL' failed.log
good_log | sed 's/^=== GUEST END rc=0/=== GUEST END rc=1/' >rc1.log
refused_log refuses_guest_rc 'no "=== GUEST END rc=0"' rc1.log
{ good_log; echo 'launcher: timeout: the guest ran past 600 s and was killed'; } >timeout.log
refused_log refuses_launcher_timeout 'failure: launcher: timeout' timeout.log
good_log | grep -v '^launcher:' >nolauncher.log
refused_log refuses_no_launcher 'no "launcher:" line' nolauncher.log
good_log | sed 's/^2 passed, 0 failed, 1 skipped/0 passed, 0 failed, 3 skipped/' >nothing.log
refused_log refuses_nothing_passed 'nothing passed' nothing.log

"$stamp" begin guest-tested "${inputs[@]}" >/dev/null
good_log >run.log
refused refuses_overrides 1 'overridden \(KVM=1 CPU=host\)' \
	env STAMP_OVERRIDES='KVM=1 CPU=host' "$stamp" write guest-tested run.log "${inputs[@]}"
refused refuses_without_begin 1 'not taken at the start of the run' "$stamp" write guest-tested run.log "${inputs[@]}"
good_log >old.log
touch -d '@1000000000' old.log
refused_log refuses_log_older_than_run 'older than the start' old.log

"$stamp" begin guest-tested "${inputs[@]}" >/dev/null
echo 'int main(void) { return 1; }' >test.c
good_log >run.log
refused refuses_inputs_changed_in_run 1 'changed: test.c' "$stamp" write guest-tested run.log "${inputs[@]}"
echo 'int main(void) { return 0; }' >test.c
touch -d '@1000000000' patterns allowed test.c
"$stamp" begin guest-tested "${inputs[@]}" >/dev/null
touch allowed
good_log >run.log
refused refuses_input_touched_in_run 1 'modified: allowed' \
	env STAMP_T0=1000000100 "$stamp" write guest-tested run.log "${inputs[@]}"
expect begin_refuses_missing_input 1 'missing  nosuchfile' "$stamp" begin guest-tested "${inputs[@]}" nosuchfile
expect begin_refuses_missing_rule 1 'rule nosuchrule: missing' "$stamp" begin guest-tested "${inputs[@]}" rule:nosuchrule

# --- check names what changed ----------------------------------------------------
cp good-record guest-tested
touch -d '@1000000000' patterns allowed test.c
echo 'int main(void) { return 2; }' >test.c
expect check_names_file 1 '^  changed: test.c$' "$stamp" check guest-tested "${inputs[@]}"
expect check_names_rerun 1 'rerun: make test-fake' "$stamp" check guest-tested "${inputs[@]}"
echo 'int main(void) { return 0; }' >test.c
expect check_names_variable 1 'changed: var NUMA_NODES: 2 4 -> 2' "$stamp" check guest-tested "${inputs[@]:0:5}" 'NUMA_NODES=2'
expect check_names_new_input 1 'new: +Makefile' "$stamp" check guest-tested "${inputs[@]}" Makefile
expect check_names_gone_input 1 'gone: +allowed' "$stamp" check guest-tested patterns test.c rule:test-fake tool:bash 'NUMA_NODES=2 4'
sed -i 's/NUMA=2 run-it/NUMA=4 run-it/' Makefile
expect check_names_rule 1 'changed: rule test-fake' "$stamp" check guest-tested "${inputs[@]}"
sed -i 's/NUMA=4 run-it/NUMA=2 run-it/' Makefile
sed -i 's/^true$/false/; s/^\ttrue$/\tfalse/' Makefile
expect check_ignores_other_rules 0 'passed on these inputs' "$stamp" check guest-tested "${inputs[@]}"
echo 'linux-source-6.1 6.1.200-1, Linux 6.1.200' >build/source-version
expect check_names_source 1 'changed: source version: .*6.1.192-3.* -> .*6.1.200-1' "$stamp" check guest-tested "${inputs[@]}"
expect check_warns_source 1 'warning: .*source-version is "linux-source-6.1 6.1.200-1.*recorded on "linux-source-6.1 6.1.192-3' \
	"$stamp" check guest-tested "${inputs[@]}"
echo 'linux-source-6.1 6.1.192-3, Linux 6.1.192' >build/source-version
echo tarball2 >src.tar.xz
expect check_names_tarball 1 'changed: source tarball' "$stamp" check guest-tested "${inputs[@]}"
echo tarball >src.tar.xz
expect check_current_again 0 'passed on these inputs' "$stamp" check guest-tested "${inputs[@]}"

# --- a line moved from one file to the next changes the hash ----------------------
# the audit's example: the last line of log-patterns moved to the top of log-allowed
printf 'BUG:\nsuspected memory leak\n' >patterns
printf '# allowed\n' >allowed
h1=$("$stamp" inputs patterns allowed | sha256sum)
c1=$(cat patterns allowed | sha256sum)
printf 'BUG:\n' >patterns
printf 'suspected memory leak\n# allowed\n' >allowed
h2=$("$stamp" inputs patterns allowed | sha256sum)
c2=$(cat patterns allowed | sha256sum)
if [ "$c1" = "$c2" ] && [ "$h1" != "$h2" ]; then
	ok moved_line_changes_hash "the concatenation is the same, the inputs hash is not"
else
	bad moved_line_changes_hash "cat same: $([ "$c1" = "$c2" ] && echo yes), inputs differ: $([ "$h1" != "$h2" ] && echo yes)"
fi
printf 'suspected memory leak\nBUG:\n' >patterns
printf '# allowed\n' >allowed
touch -d '@1000000000' patterns allowed test.c
expect inputs_order_free 0 'passed on these inputs' "$stamp" check guest-tested tool:bash test.c 'NUMA_NODES=2 4' rule:test-fake allowed patterns

# --- records edited by hand, old records -------------------------------------------
sed 's/^#1 bad_input: OK$/#1 bad_input: OK (fast)/' good-record >guest-tested
expect verify_finds_edited_results 1 'FAIL: its launcher or result lines are not the log' "$stamp" verify guest-tested run.log
sed 's/^\([0-9a-f]\{64\}\)  test.c$/0000000000000000000000000000000000000000000000000000000000000000  test.c/' good-record >guest-tested
expect check_finds_edited_inputs 1 'not the hash of its input lines' "$stamp" check guest-tested "${inputs[@]}"
expect verify_finds_edited_inputs 1 'FAIL: its inputs hash' "$stamp" verify guest-tested
cp good-record guest-tested
echo other >other.log
expect verify_finds_other_log 1 'FAIL: other.log is not the log recorded' "$stamp" verify guest-tested other.log
{
	echo '# A recorded pass (guest/stamp.sh); the next line is the'
	echo '# sha256 (16 digits) of: patterns allowed'
	echo 27c78c95e59873f1
	echo '2026-12-06 10:53 UTC, linux-source-6.1 6.1.190-1, Linux 6.1.190:'
	echo '70 passed, 0 failed'
} >old-tested
expect old_record_is_stale 1 'stale: the record is in the old format' "$stamp" check old-tested "${inputs[@]}"
expect old_record_source_warned 0 'recorded on "linux-source-6.1 6.1.190-1, Linux 6.1.190"' "$stamp" source-warn old-tested
expect no_record_is_stale 1 'no-tested: no record' "$stamp" check no-tested "${inputs[@]}"

# --- the cross build's log ---------------------------------------------------------
cross_log() {
	cat <<'EOF'
[   0s] unpack /usr/src/linux-source-6.1.tar.xz
[  30s] step 0, arm64: 880 objects compiled, no warnings
cross: step 13, 0013-x.patch, not built: it changes only arch/x86/, which no build here reads, so each tree builds as at step 12
cross: Debian's source and all 21 steps of the series build for arm64, s390 and riscv without warnings (2 of them change only arch/x86/ and were not built again)
60 passed, 0 failed, 6 skipped
EOF
}
"$stamp" begin cross-tested "${inputs[@]}" >/dev/null
cross_log >cross.log
expect cross_writes 0 'STAMP +cross-tested' "$stamp" write cross-tested cross.log "${inputs[@]}"
grep -q '^cross: step 13, .*not built' cross-tested &&
	ok cross_record_names_skips "the record keeps the skipped step's line" ||
	bad cross_record_names_skips "no skipped step line" "$(cat cross-tested)"
"$stamp" begin cross-tested "${inputs[@]}" >/dev/null
cross_log | grep -v "^cross: Debian's source" >cross-bad.log
expect cross_refuses_no_success_line 1 "no \"cross: Debian's source and all N steps" "$stamp" write cross-tested cross-bad.log "${inputs[@]}"
"$stamp" begin cross-tested "${inputs[@]}" >/dev/null
{ cross_log; echo 'cross: s390, step 4 (0004-x.patch), builds with warnings: logs/step4-s390.log'; } >cross-warn.log
expect cross_refuses_failure_line 1 'failure: cross: s390, step 4' "$stamp" write cross-tested cross-warn.log "${inputs[@]}"
"$stamp" begin cross-tested "${inputs[@]}" >/dev/null
expect cross_refuses_guest_log 1 'not a passing cross log' "$stamp" write cross-tested run.log "${inputs[@]}"

if [ "$quiet" = 1 ]; then
	[ "$failed" = 0 ] && echo "#- stamp_records: OK ($cases cases of guest/test-stamp.sh)" ||
		echo "#- stamp_records: FAIL (guest/test-stamp.sh: the cases above failed)"
fi
exit "$failed"
