#!/bin/bash
# Records of the slow suites' last passing runs (guest/debug-tested,
# guest/debian-tested, guest/cross-tested, guest/system-tested).  CI does not
# rerun them: it fails when a record no longer matches what its suite would
# test now (Makefile, check_record; run_if_changed reruns the suite), so a
# record must name everything that decides the outcome, and only a real pass
# may write one.
#
#   stamp.sh begin  STAMP ITEM...      at the start of a run: the inputs, into
#                                      build/stamps/NAME.inputs
#   stamp.sh write  STAMP LOG ITEM...  after a pass: writes STAMP, or refuses
#                                      (exit 1) and says why
#   stamp.sh check  STAMP ITEM...      exit 0 if STAMP records a pass on these
#                                      inputs; else names each input that
#                                      changed and the command that reruns it
#   stamp.sh verify STAMP [LOG]        recomputes what STAMP lists (files,
#                                      Makefile rules, versions) and compares;
#                                      with LOG, its sha256 and result lines
#   stamp.sh inputs ITEM...            prints the inputs as a record lists them
#   stamp.sh source-warn STAMP...      warns when build/source-version is not
#                                      the source the records were made on
#
# An ITEM (the Makefile's *_INPUTS) is one of
#   PATH          a file: "SHA256  PATH" (sha256sum's line; "missing  PATH")
#   NAME=VALUE    a make variable as the run expanded it: "var NAME: VALUE"
#   rule:TARGET   the Makefile's rule for TARGET, from its target line to the
#                 next empty line ($(B) read as build): "rule TARGET: SHA256"
#   tool:CMD      "tool CMD: " and the first line of "CMD --version"
#   pkg:PKG       "pkg PKG: " and the installed version of the Debian
#                 package, else the version apt-get would install
#   distro-image  "distro image: PACKAGE VERSION", Debian's linux-image that
#                 guest/distro-kernel.sh took (build/distro) or would take
# and every record has the kernel source:
#   "source version: " and build/source-version, "source tarball: " and the
#   sha256 of $SRC_TAR.
# A moved line changes a file's hash, and the input lines are sorted by
# name, so the inputs hash depends on the names and the contents only.
#
# Record format (format 2):
#   # comment lines
#   format: 2
#   rerun: the command that reruns the suite (make test-debug)
#   date: when the record was written (UTC)
#   source: build/source-version at the time
#   inputs: sha256 of the "== inputs" lines (each with its newline)
#   log: SHA256  LOG, the sha256 of the judged log the results come from
#   == inputs
#   one line per ITEM, as above, sorted by name
#   == launcher
#   the log's "launcher:" lines (guest/run-qemu.sh: accelerator, memory,
#   vCPUs, nodes, seconds), one per boot
#   == results
#   every result line of the log: "### " notes, "#N name: OK|FAIL|SKIP"
#   (tests and subtests, notes kept), "cross: " lines, test_progs'
#   "Summary:", the per-log counts and the "N passed, N failed[, N
#   skipped]" lines, the last of which is the suite's
# A reader can check one by hand:
#   sed -n '/^== inputs$/,/^== launcher$/p' STAMP | sed '1d;$d' | sha256sum
#   sed -n '/^== inputs$/,/^== launcher$/p' STAMP | grep -E '^[0-9a-f]{64}  ' | sha256sum -c
#
# write refuses when
#   - STAMP_OVERRIDES is not empty: the run was not the Makefile's (KVM=1,
#     CPU=, RUNNER_ARGS=, ... on the command line or in the environment);
#   - there is no build/stamps/NAME.inputs from a begin of this run, or the
#     inputs now differ from it (edited during the run), or an input file
#     was modified after STAMP_T0, the start of the make that ran the suite;
#   - an input file is missing, or the source is unknown;
#   - LOG is older than the begin, or is not a passing log: for a guest
#     suite, an "=== GUEST END rc=0" marker and no other, a "launcher:"
#     line, no launcher timeout or QEMU error, no FAIL result line, and
#     every "N passed, N failed" line with 0 failed, the last with N > 0;
#     for the cross build (STAMP named cross-*), cross-build.sh's "cross:
#     Debian's source and all N steps ..." line, none of its failure lines,
#     and the same counts.
# The Makefile runs begin as a suite's first command, after its
# prerequisites (the kernel build): STAMP_T0 covers edits made before it.
# What a record cannot show is that its log came from a guest rather than
# an editor: keep the log whose sha256 it holds (verify STAMP LOG).
#
# Environment: SRC_TAR (/usr/src/linux-source-6.1.tar.xz); STAMP_RERUN, the
# command that reruns the suite (check prints it, write keeps it);
# STAMP_T0 and STAMP_OVERRIDES (write, above); STAMP_BUILD (build), the
# directory of source-version, distro/ and stamps/; STAMP_MAKEFILE
# (Makefile), where rule: items are read.
set -eo pipefail
export LC_ALL=C
build=${STAMP_BUILD:-build}
makefile=${STAMP_MAKEFILE:-Makefile}
src_tar=${SRC_TAR:-/usr/src/linux-source-6.1.tar.xz}

usage() {
	sed -n '8,20p' "$0" >&2
	exit 2
}

# --- the inputs --------------------------------------------------------------
first_line() {
	local out
	out=$("$@" 2>&1 </dev/null) || true
	printf '%s\n' "${out%%$'\n'*}"
}

# The Makefile's rule for $1: its target line to the next empty line.
rule_text() {
	awk -v t="$1" '
		!on {
			line = $0
			gsub(/\$\(B\)/, "build", line)
			if (line ~ /^[^\t#:=][^:=]*:/) {
				n = split(substr(line, 1, index(line, ":") - 1), ts, " ")
				for (i = 1; i <= n; i++)
					if (ts[i] == t)
						on = 1
			}
		}
		on && $0 == "" { exit }
		on { print }' "$makefile"
}

pkg_version() {
	local v
	v=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true)
	case "$v" in
	ii*) dpkg-query -W -f='${Version}\n' "$1" ;;
	*)
		v=$(apt-cache policy "$1" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }') || true
		echo "${v:-not in the apt cache}"
		;;
	esac
}

# As guest/distro-kernel.sh: the linux-image-6.1.0-N-amd64 unpacked in
# build/distro, else the one of the installed linux-source-6.1's version,
# else the newest in the apt cache.
distro_image() {
	local deb want pkgs
	deb=$(ls "$build"/distro/deb/*.deb 2>/dev/null | head -n 1) || true
	if [ -n "$deb" ]; then
		dpkg-deb -f "$deb" Package Version | awk '{ printf "%s%s", sep, $2; sep = " " } END { print "" }'
		return
	fi
	if ls "$build"/distro/boot/config-* >/dev/null 2>&1; then
		deb=$(ls "$build"/distro/boot/config-* | sort -V | tail -n 1)
		echo "linux-image-${deb##*/config-} (unpacked in $build/distro, version unknown)"
		return
	fi
	want=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
	pkgs=$(apt-cache pkgnames linux-image-6.1.0- 2>/dev/null | grep -E '^linux-image-6\.1\.0-[0-9]+-amd64$' || true)
	if [ -z "$pkgs" ]; then
		echo "none in the apt cache"
		return
	fi
	# shellcheck disable=SC2086
	apt-cache show --no-all-versions $pkgs | awk '$1 == "Package:" { p = $2 } $1 == "Version:" { print p, $2 }' |
		sort -V | awk -v want="$want" '
			$2 == want { print; found = 1; exit }
			{ last = $0 }
			END { if (!found) print last }'
}

# One line per item, keyed by name ("KEY<tab>LINE"), then sorted.
item_line() {
	local it=$1 t
	case "$it" in
	rule:*)
		t=$(rule_text "${it#rule:}") || t=
		if [ -n "$t" ]; then
			printf 'rule %s: %s\n' "${it#rule:}" "$(printf '%s\n' "$t" | sha256sum | cut -d' ' -f1)"
		else
			printf 'rule %s: missing\n' "${it#rule:}"
		fi
		;;
	tool:*)
		if command -v "${it#tool:}" >/dev/null; then
			printf 'tool %s: %s\n' "${it#tool:}" "$(first_line "${it#tool:}" --version)"
		else
			printf 'tool %s: not installed\n' "${it#tool:}"
		fi
		;;
	pkg:*) printf 'pkg %s: %s\n' "${it#pkg:}" "$(pkg_version "${it#pkg:}")" ;;
	distro-image) printf 'distro image: %s\n' "$(distro_image)" ;;
	[A-Za-z_]*=*)
		t=${it%%=*}
		if [[ $t =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then
			printf 'var %s: %s\n' "$t" "${it#*=}"
		else
			file_line "$it"
		fi
		;;
	*) file_line "$it" ;;
	esac
}
file_line() {
	if [ -f "$1" ]; then
		sha256sum -- "$1"
	else
		printf 'missing  %s\n' "$1"
	fi
}

source_lines() {
	if [ -r "$build/source-version" ]; then
		echo "source version: $(cat "$build/source-version")"
	else
		echo "source version: missing ($build/source-version)"
	fi
	if [ -r "$src_tar" ]; then
		echo "source tarball: $(sha256sum <"$src_tar" | cut -d' ' -f1)"
	else
		echo "source tarball: missing ($src_tar)"
	fi
}

# KEY<tab>VALUE for each input line: a file's key is its name, another
# line's what comes before its first ": ".
keyed() {
	awk '{
		if (match($0, /^[0-9a-f]+  /) || match($0, /^missing  /)) {
			k = substr($0, RLENGTH + 1); v = substr($0, 1, RLENGTH - 2)
		} else if ((i = index($0, ": ")) > 0) {
			k = substr($0, 1, i - 1); v = substr($0, i + 2)
		} else {
			k = $0; v = ""
		}
		print k "\t" v "\t" $0
	}'
}

manifest() {
	{
		for it in "$@"; do item_line "$it"; done
		source_lines
	} | keyed | sort -t "$(printf '\t')" -k1,1 -u | cut -f3-
}

hash_of() { sha256sum | cut -d' ' -f1; }

# What changed from manifest $1 to manifest $2 (files), one line each.
changes() {
	awk -F '\t' '
		NR == FNR { old[$1] = $2; next }
		{
			seen[$1] = 1
			if (!($1 in old))
				print "  new:     " $1 (/^(var|tool|pkg|rule|source|distro) / ? ": " $2 : "")
			else if (old[$1] != $2) {
				if ($2 ~ /^[0-9a-f]+$/ && old[$1] ~ /^[0-9a-f]+$/)
					print "  changed: " $1
				else
					print "  changed: " $1 ": " old[$1] " -> " $2
			}
		}
		END { for (k in old) if (!(k in seen)) print "  gone:    " k }' \
		<(keyed <"$1") <(keyed <"$2") | sort -k2
}

# --- records -----------------------------------------------------------------
field() { sed -n "s/^$1: //p" "$2" | head -n 1; }
section() { # FILE NAME: the lines of section NAME
	awk -v s="== $2" '$0 == s { on = 1; next } /^== / { on = 0 } on' "$1"
}
is_v2() { [ "$(field format "$1" 2>/dev/null)" = 2 ]; }
# The source line of a record; an old record has it in line 4.
record_source() {
	if is_v2 "$1"; then
		field source "$1"
	else
		sed -n '4s/^[^,]*, \(.*\):$/\1/p' "$1"
	fi
}

source_warn() {
	local now rec s
	now=$(cat "$build/source-version" 2>/dev/null) || return 0
	for rec in "$@"; do
		[ -r "$rec" ] || continue
		s=$(record_source "$rec")
		[ -n "$s" ] && [ "$s" != "$now" ] || continue
		echo "warning: $build/source-version is \"$now\", but $(basename "$rec") was recorded on \"$s\""
		echo "         (make deps installs the linux-source-6.1 Debian ships today; the records and the README's numbers are for the other)"
	done
}

result_lines() {
	grep -a -E '^### |^#[0-9]+(/[0-9]+)? [^ ]+: (OK|FAIL|SKIP)|^cross: |^Summary: |^ *[^ ]+\.log +[0-9]+ passed, [0-9]+ failed|^[0-9]+ passed, [0-9]+ failed' "$1" || true
}
launcher_lines() { grep -a '^launcher: ' "$1" || true; }

# Why LOG is not a passing log of kind $2 (guest|cross); nothing if it is.
log_problems() {
	local log=$1 kind=$2 counts last p f
	[ -s "$log" ] || { echo "the log is empty"; return; }
	if [ "$kind" = cross ]; then
		grep -a -q -E "^cross: Debian's source and all [0-9]+ steps of the series build" "$log" ||
			echo "no \"cross: Debian's source and all N steps of the series build ...\" line"
		grep -a -E '^cross: .*(does not apply|does not build|builds with warnings|no .*gcc)' "$log" | sed 's/^/failure: /'
	else
		grep -a -q -E '^=== GUEST END rc=0( |$)' "$log" ||
			echo "no \"=== GUEST END rc=0\" marker: no guest ran to its end"
		grep -a -E '^=== GUEST END rc=' "$log" | grep -v -E '^=== GUEST END rc=0( |$)' | sed 's/^/failure: /'
		grep -a -q '^launcher: ' "$log" || echo "no \"launcher:\" line (guest/run-qemu.sh)"
		grep -a -E '^launcher: (timeout|qemu exited)' "$log" | sed 's/^/failure: /'
	fi
	grep -a -E '^#[0-9]+(/[0-9]+)? [^ ]+: FAIL' "$log" | head -n 5 | sed 's/^/failure: /'
	counts=$(grep -a -E '^ *([^ ]+\.log +)?[0-9]+ passed, [0-9]+ failed' "$log" || true)
	if [ -z "$counts" ]; then
		echo "no \"N passed, N failed\" line"
		return
	fi
	printf '%s\n' "$counts" | awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^failed/ && $(i - 1) != 0) print "failure: " $0 }'
	last=$(grep -a -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$last" ]; then
		echo "no final \"N passed, N failed\" line"
		return
	fi
	p=${last%% passed*}
	f=${last#*, }
	f=${f%% failed*}
	[ "$f" = 0 ] || echo "the last count says $f failed: $last"
	[ "$p" -gt 0 ] || echo "the last count says nothing passed: $last"
}

stamp_name() { basename "$1"; }
inputs_file() { echo "$build/stamps/$(stamp_name "$1").inputs"; }

# --- commands ----------------------------------------------------------------
cmd_inputs() { manifest "$@"; }

cmd_begin() {
	local stamp=$1 f tmp missing
	shift
	mkdir -p "$build/stamps"
	f=$(inputs_file "$stamp")
	tmp=$(mktemp "$f.XXXXXX")
	manifest "$@" >"$tmp"
	missing=$(grep -E '^missing  |^source [a-z]+: missing|^rule [^:]*: missing$' "$tmp" || true)
	if [ -n "$missing" ]; then
		rm -f "$tmp" "$f"
		echo "stamp.sh: $(stamp_name "$stamp"): inputs missing, the record could not be written:" >&2
		printf '  %s\n' "$missing" >&2
		exit 1
	fi
	mv "$tmp" "$f"
	echo "  STAMP   inputs of $(stamp_name "$stamp"): $(hash_of <"$f" | cut -c1-16) ($f)"
	[ -z "$STAMP_OVERRIDES" ] ||
		echo "  STAMP   overridden ($STAMP_OVERRIDES): this run will not be recorded in $stamp"
}

refuse() {
	echo "stamp.sh: $(stamp_name "$stamp") NOT WRITTEN: $1" >&2
	shift
	[ $# = 0 ] || printf '%s\n' "$@" >&2
	exit 1
}

cmd_write() {
	local stamp=$1 log=$2 begun now kind problems t0 newer f tmp
	shift 2
	begun=$(inputs_file "$stamp")
	now=$(mktemp)
	# A begin serves one write, refused or not.
	# shellcheck disable=SC2064 # expanded now: the locals are gone at exit
	trap "rm -f '$now' '$begun'" EXIT
	[ -z "$STAMP_OVERRIDES" ] ||
		refuse "the run was overridden ($STAMP_OVERRIDES): a record vouches only for the run the Makefile makes"
	[ -f "$log" ] && [ -r "$log" ] || refuse "$log is not a readable file"
	case "$(stamp_name "$stamp")" in
	cross-*) kind=cross ;;
	*) kind=guest ;;
	esac
	problems=$(log_problems "$log" "$kind")
	[ -z "$problems" ] || refuse "$log is not a passing $kind log:" "$(printf '%s\n' "$problems" | sed 's/^/  /')"
	[ -r "$begun" ] ||
		refuse "no $begun: the inputs were not taken at the start of the run (stamp.sh begin)"
	[ ! "$begun" -nt "$log" ] || refuse "$log is older than the start of the run"

	manifest "$@" >"$now"
	grep -q -E '^missing  |^source [a-z]+: missing|^rule [^:]*: missing$' "$now" &&
		refuse "inputs missing:" "$(grep -E '^missing  |: missing' "$now" | sed 's/^/  /')"
	cmp -s "$begun" "$now" ||
		refuse "the inputs changed during the run; rerun it:" "$(changes "$begun" "$now")"
	t0=${STAMP_T0:-$(stat -c %Y "$begun")}
	newer=$(sed -n 's/^[0-9a-f]\{64\}  //p' "$now" | while IFS= read -r f; do
		[ "$(stat -c %Y -- "$f")" -le "$t0" ] || echo "  modified: $f ($(date -u -r "$f" '+%F %T UTC'))"
	done)
	[ -z "$newer" ] ||
		refuse "input files were modified after the run started ($(date -u -d "@$t0" '+%F %T UTC')); rerun it:" "$newer"

	tmp=$(mktemp "$stamp.XXXXXX")
	{
		echo "# A pass of \"${STAMP_RERUN:-the suite}\", recorded by guest/stamp.sh, which"
		echo "# describes this format.  \"guest/stamp.sh check\" (make ...-if-changed) compares"
		echo "# the inputs with the tree's; \"guest/stamp.sh verify $stamp [LOG]\" recomputes them."
		echo "format: 2"
		echo "rerun: ${STAMP_RERUN:-unknown}"
		echo "date: $(date -u '+%F %H:%M UTC')"
		echo "source: $(cat "$build/source-version")"
		echo "inputs: $(hash_of <"$now")"
		echo "log: $(hash_of <"$log")  $log"
		echo "== inputs"
		cat "$now"
		echo "== launcher"
		launcher_lines "$log"
		echo "== results"
		result_lines "$log"
	} >"$tmp"
	chmod 644 "$tmp"
	mv "$tmp" "$stamp"
	echo "  STAMP   $stamp ($(grep -a -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1); inputs $(hash_of <"$now" | cut -c1-16))"
}

cmd_check() {
	local stamp=$1 name rerun now rec n
	shift
	name=$(stamp_name "$stamp")
	rerun=${STAMP_RERUN:-$(field rerun "$stamp" 2>/dev/null || true)}
	rerun=${rerun:-the target that writes $stamp}
	if [ ! -r "$stamp" ]; then
		echo "$name: no record: rerun: $rerun"
		exit 1
	fi
	if ! is_v2 "$stamp"; then
		echo "$name: stale: the record is in the old format (one hash over the files' text, no list of inputs, no log hash)"
		source_warn "$stamp"
		echo "$name: rerun: $rerun"
		exit 1
	fi
	now=$(mktemp)
	rec=$(mktemp)
	# shellcheck disable=SC2064 # expanded now: the locals are gone at exit
	trap "rm -f '$now' '$rec'" EXIT
	section "$stamp" inputs >"$rec"
	if [ "$(hash_of <"$rec")" != "$(field inputs "$stamp")" ]; then
		echo "$name: stale: its \"inputs:\" hash is not the hash of its input lines (edited by hand?)"
		echo "$name: rerun: $rerun"
		exit 1
	fi
	manifest "$@" >"$now"
	if [ "$(hash_of <"$now")" = "$(field inputs "$stamp")" ]; then
		echo "$name: passed on these inputs ($(field date "$stamp"), $(field source "$stamp")): $(section "$stamp" results | grep -E '^[0-9]+ passed' | tail -n 1)"
		exit 0
	fi
	n=$(changes "$rec" "$now" | wc -l)
	echo "$name: stale: $n input(s) changed since the recorded pass of $(field date "$stamp"):"
	changes "$rec" "$now"
	source_warn "$stamp"
	echo "$name: rerun: $rerun"
	exit 1
}

# Recomputes what the record lists from the record alone: files, rules,
# tools, packages and the source (variables are the Makefile's: check
# compares those).  With LOG, the log's sha256 and the lines kept from it.
cmd_verify() {
	local stamp=$1 log=$2 name rec now bad=0
	name=$(stamp_name "$stamp")
	[ -r "$stamp" ] || { echo "$name: no record"; exit 1; }
	is_v2 "$stamp" || { echo "$name: old format: nothing to verify (no list of inputs, no log hash)"; exit 1; }
	rec=$(mktemp)
	now=$(mktemp)
	# shellcheck disable=SC2064 # expanded now: the locals are gone at exit
	trap "rm -f '$rec' '$now'" EXIT
	section "$stamp" inputs >"$rec"
	if [ "$(hash_of <"$rec")" = "$(field inputs "$stamp")" ]; then
		echo "$name: its inputs hash is the hash of its $(wc -l <"$rec") input lines"
	else
		echo "$name: FAIL: its inputs hash is not the hash of its input lines"
		bad=1
	fi
	local -a items=()
	while IFS=$'\t' read -r k v _; do
		case "$k" in
		"var "*) items+=("${k#var }=$v") ;;
		"rule "*) items+=("rule:${k#rule }") ;;
		"tool "*) items+=("tool:${k#tool }") ;;
		"pkg "*) items+=("pkg:${k#pkg }") ;;
		"distro image") items+=(distro-image) ;;
		"source "*) ;;
		*) items+=("$k") ;;
		esac
	done < <(keyed <"$rec")
	manifest "${items[@]}" >"$now"
	if cmp -s "$rec" "$now"; then
		echo "$name: every input is as recorded (files, rules, tools, packages, source)"
	else
		echo "$name: FAIL: inputs differ from the record:"
		changes "$rec" "$now"
		bad=1
	fi
	if [ -n "$log" ]; then
		if [ "$(hash_of <"$log")" = "$(field log "$stamp" | cut -d' ' -f1)" ]; then
			echo "$name: $log is the log recorded"
		else
			echo "$name: FAIL: $log is not the log recorded (sha256 differs)"
			bad=1
		fi
		if [ "$(launcher_lines "$log")" = "$(section "$stamp" launcher)" ] &&
		   [ "$(result_lines "$log")" = "$(section "$stamp" results)" ]; then
			echo "$name: its launcher and result lines are the log's"
		else
			echo "$name: FAIL: its launcher or result lines are not the log's:"
			diff <(section "$stamp" launcher; section "$stamp" results) \
				<(launcher_lines "$log"; result_lines "$log") | head -n 20 || true
			bad=1
		fi
		[ -n "$(log_problems "$log" "$(case "$name" in cross-*) echo cross ;; *) echo guest ;; esac)")" ] &&
			{ echo "$name: FAIL: $log is not a passing log"; bad=1; }
	fi
	[ "$bad" = 0 ] && echo "$name: verified"
	exit "$bad"
}

cmd=$1
shift || usage
case "$cmd" in
begin) [ $# -ge 1 ] || usage; cmd_begin "$@" ;;
write) [ $# -ge 2 ] || usage; cmd_write "$@" ;;
check) [ $# -ge 1 ] || usage; cmd_check "$@" ;;
verify) [ $# -ge 1 ] || usage; cmd_verify "$@" ;;
inputs) cmd_inputs "$@" ;;
source-warn) source_warn "$@" ;;
*) usage ;;
esac
