#!/bin/bash
# make bench: boots base, patched and Debian's binary kernel on the same
# initramfs (build/bench/initramfs.cpio) with the same workloads, then
# writes build/bench/report.md, *.csv and *.svg.
#
# Every guest runs under CLOCK=icount (guest/run-qemu.sh): its clock counts
# the instructions it runs, so the host's load hardly moves a timing (two
# runs of the bench: within 0.9%), and boots can share the host:
# BENCH_JOBS of them run at once.  Boot N of a
# kernel has QEMU seed N, so base and patched boot N see the same random
# numbers from QEMU and can be compared load by load.
#   BENCH_ARGS   benchtool options (bench/Makefile has the defaults)
#   KERNELS      which kernels ("base patched distro")
#   REPEAT       boots of base and patched in all (2): the extra boots only
#                add load costs, under another seed, and skip the mixed
#                random churn, which is about packs
#   BENCH_JOBS   guests at once (the number of cores)
set -eo pipefail
cd "$(dirname "$0")/.."
out=build/bench
kernels=${KERNELS:-base patched distro}
args=${BENCH_ARGS:--n 5000 -r 8 -S 100000 -L 10000 -T 30000 -s 1}
repeat=${REPEAT:-2}
jobs_max=${BENCH_JOBS:-$(nproc)}
t0=$(date +%s)
say() { printf '[%4ds] %s\n' $(( $(date +%s) - t0 )) "$*"; }

# Debian's own kernel for the source version: unpacked, never installed.
distro_image() {
	echo build/distro/boot/vmlinuz-$(guest/distro-kernel.sh build/distro)
}

# boot K LOG SEED [OPTIONS]: one guest run of the workloads on kernel K,
# with benchtool OPTIONS after $args
boot() {
	local k=$1 log=$2 seed=$3 img a="$args${4:+ $4}"
	case $k in
	distro) img=$(distro_image) ;;
	*) img=build/$k/bzImage ;;
	esac
	echo "$img" > $out/image-$k
	say "kernel $k ($img, seed $seed): booting, benchtool $a"
	cmd="guest_cmd=benchtool$(printf ',%s' $a)"
	CLOCK=icount SEED=$seed GUEST_TIMEOUT=${BENCH_TIMEOUT:-1200} guest/run-qemu.sh "$img" \
		$out/initramfs.cpio "$log" "$cmd" | grep --line-buffered -E '^\[bench|^=== GUEST|QEMU' |
		sed -u "s/^/         $k.$seed: /" || true
	if grep -q '^=== GUEST END rc=0 ===' "$log"; then
		say "kernel $k, seed $seed: done"
	else
		say "kernel $k, seed $seed: the guest failed, see $log"
		tail -n 5 "$log"
	fi
}

# start K LOG SEED [OPTIONS]: boot in the background, at most jobs_max at once
logs=()
start() {
	while [ "$(jobs -pr | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
	boot "$@" &
	logs+=("$2")
}

rm -f $out/log-*.log
# the distro image is downloaded once, before the boots that need it
case " $kernels " in *" distro "*) distro_image >/dev/null ;; esac
for k in $kernels; do
	start $k $out/log-$k.log 1
done
for ((i = 2; i <= repeat; i++)); do
	for k in base patched; do
		case " $kernels " in *" $k "*) start $k $out/log-$k.$i.log $i "-w crs" ;; esac
	done
done
wait
# each boot judged as every guest run is: end marker, rc 0, no kernel bug
for log in "${logs[@]}"; do
	guest/check-log.sh "$log" command >/dev/null || { guest/check-log.sh "$log" command; exit 1; }
done
say "report: $out/report.md"
python3 bench/report.py $out $kernels
for g in $out/*.gp; do gnuplot "$g"; done
ls $out/*.svg | sed 's/^/         plot: /'
say "make bench done"
