#!/bin/bash
# cross-build.sh SRC_TAR WORKDIR: the series on the other architectures
# Debian ships, built with Debian's cross compilers (arm64, s390x, riscv64).
#
# One unpacked tree and one build directory (O=) per architecture, each
# configured from the architecture's defconfig plus guest/cross.fragment.
# The tree is built as it comes, then again after each patch of
# patches/series.  Built at each step: the directories that hold what the
# series changes or what includes the headers it changes (kernel/bpf,
# kernel/module, mm, net/bpf (the dummy_ops test image), the
# architecture's mm (ptdump, set_memory) and net (the BPF JIT)) and the
# architecture's module loader.  A step fails on an
# error or a warning, naming the architecture, the patch and the log; the
# last line counts the builds (architectures x steps) that passed.
# A patch that changes only files under arch/x86/ (its "diff --git", "---"
# and "+++" paths) is applied but not built: none of these builds reads
# arch/x86/, so each would compile what the step before compiled, byte for
# byte.  The skipped builds are counted and named in a "cross:" line.
# Environment: JOBS (3), make jobs for each architecture.
set -eo pipefail
src_tar=$1 work=$2
[ -f "$src_tar" ] && [ -n "$work" ] || { echo "usage: $0 SRC_TAR WORKDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-3}
arches="arm64:aarch64-linux-gnu- s390:s390x-linux-gnu- riscv:riscv64-linux-gnu-"
t0=$(date +%s)
say() { printf '[%4ds] %s\n' $(($(date +%s) - t0)) "$*"; }

for a in $arches; do
	command -v "${a#*:}gcc" >/dev/null || { echo "cross: no ${a#*:}gcc (make deps-cross)"; exit 1; }
done
rm -rf "$work" && mkdir -p "$work/logs"
work=$(cd "$work" && pwd)
say "unpack $src_tar"
tar -xJf "$src_tar" -C "$work" && mv "$work/linux-source-6.1" "$work/linux"

kmake() {
	arch=${1%%:*} cross=${1#*:}
	shift
	make -C "$work/linux" O="$work/$arch" ARCH="$arch" CROSS_COMPILE="$cross" "$@"
}

for a in $arches; do
	arch=${a%%:*}
	say "configure $arch: defconfig + guest/cross.fragment"
	log=$work/logs/config-$arch.log
	kmake "$a" -s defconfig >"$log" 2>&1
	(cd "$work/linux" && scripts/kconfig/merge_config.sh -m -O "$work/$arch" \
		"$work/$arch/.config" "$here/guest/cross.fragment") >>"$log" 2>&1
	kmake "$a" -s olddefconfig >>"$log" 2>&1
	"$here/guest/check-config.sh" "$here/guest/cross.fragment" "$work/$arch/.config"
done

# The architectures of a step build side by side: most steps compile a few
# objects, and a make run is then mostly its own serial start-up.
build_step() {
	step=$1 name=$2
	local -a pids=() rcs=()
	for a in $arches; do
		arch=${a%%:*}
		targets="kernel/bpf/ kernel/module/ mm/ net/bpf/ arch/$arch/mm/ arch/$arch/net/ arch/$arch/kernel/module.o"
		kmake "$a" -j"$jobs" $targets >"$work/logs/step$step-$arch.log" 2>&1 &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		if wait "$pid"; then rcs+=(0); else rcs+=(1); fi
	done
	i=0
	for a in $arches; do
		arch=${a%%:*}
		log=$work/logs/step$step-$arch.log
		if [ "${rcs[i]}" != 0 ]; then
			tail -n 20 "$log"
			echo "cross: $arch, step $step ($name), does not build: $log"
			exit 1
		fi
		if grep -E '(warning|error):' "$log"; then
			echo "cross: $arch, step $step ($name), builds with warnings: $log"
			exit 1
		fi
		say "step $step, $arch: $(grep -c '^  CC' "$log") objects compiled, no warnings"
		builds=$((builds + 1))
		i=$((i + 1))
	done
}

# 0 if patch $1 changes files under arch/x86/ and nothing else.
x86_only() {
	local paths
	paths=$(sed -n -E -e 's#^diff --git a/([^ ]+) b/([^ ]+)$#\1\n\2#p' \
		-e 's#^(\+\+\+ b|--- a)/([^[:space:]]+).*#\2#p' "$1" | sort -u)
	[ -n "$paths" ] && ! grep -q -v '^arch/x86/' <<<"$paths"
}

builds=0 skipped=0 skipped_steps=0
build_step 0 "Debian's source as it comes"
n=0
while read -r p; do
	case "$p" in '' | '#'*) continue ;; esac
	n=$((n + 1))
	say "series step $n: $p"
	patch -d "$work/linux" -p1 --forward --batch -s <"$here/patches/$p" ||
		{ echo "cross: patch $n, $p, does not apply"; exit 1; }
	if x86_only "$here/patches/$p"; then
		echo "cross: step $n, $p, not built: it changes only arch/x86/, which no build here reads, so each tree builds as at step $((n - 1))"
		skipped=$((skipped + $(wc -w <<<"$arches")))
		skipped_steps=$((skipped_steps + 1))
		continue
	fi
	build_step "$n" "$p"
done <"$here/patches/series"
echo "cross: Debian's source and all $n steps of the series build for arm64, s390 and riscv without warnings$( ((skipped_steps == 0)) || echo " ($skipped_steps of them change only arch/x86/ and were not built again)")"
echo "$builds passed, 0 failed, $skipped skipped"
