#!/bin/bash
# make bench: boots base, patched and Debian's binary kernel in turn on the
# same initramfs (build/bench/initramfs.cpio) with the same workloads, one
# QEMU at a time, then writes build/bench/report.md, *.csv and *.svg.
#   BENCH_ARGS   benchtool options (bench/Makefile has the defaults)
#   KERNELS      which kernels, in order ("base patched distro")
#   REPEAT       boots of base and patched in all (2): the extra boots come
#                after the others, patched first, and only add load costs,
#                so that the comparison is of two boots a kernel, in ABBA order;
#                they skip the mixed random churn, which is about packs
set -eo pipefail
cd "$(dirname "$0")/.."
out=build/bench
kernels=${KERNELS:-base patched distro}
args=${BENCH_ARGS:--n 5000 -r 8 -S 100000 -L 10000 -T 30000 -s 1}
repeat=${REPEAT:-2}
t0=$(date +%s)
say() { printf '[%4ds] %s\n' $(( $(date +%s) - t0 )) "$*"; }

# Debian's own kernel for the source version: unpacked, never installed.
distro_image() {
	local want pkg p v
	want=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	for p in $(apt-cache pkgnames linux-image-6.1.0- | grep -E '^linux-image-6\.1\.0-[0-9]+-amd64$' | sort -V); do
		v=$(apt-cache show --no-all-versions "$p" | awk '/^Version:/ { print $2 }')
		pkg=${pkg:-$p}
		[ "$v" = "$want" ] && { pkg=$p; break; }
	done
	[ -n "$pkg" ] || { echo "bench: no linux-image-6.1.0-*-amd64 in the apt cache" >&2; return 1; }
	if ! ls $out/distro/boot/vmlinuz-* >/dev/null 2>&1; then
		mkdir -p $out/deb $out/distro
		(cd $out/deb && apt-get download -q "$pkg" >/dev/null)
		dpkg-deb -x $out/deb/"$pkg"_*.deb $out/distro
	fi
	ls $out/distro/boot/vmlinuz-* | head -n 1
}

# boot K LOG [OPTIONS]: one guest run of the workloads on kernel K, with
# benchtool OPTIONS after $args
boot() {
	local k=$1 log=$2 img a="$args${3:+ $3}"
	case $k in
	distro) img=$(distro_image) ;;
	*) img=build/$k/bzImage ;;
	esac
	echo "$img" > $out/image-$k
	say "kernel $k ($img): booting, benchtool $a"
	cmd="guest_cmd=benchtool$(printf ',%s' $a)"
	GUEST_TIMEOUT=${BENCH_TIMEOUT:-480} guest/run-qemu.sh "$img" $out/initramfs.cpio \
		"$log" "$cmd" | grep --line-buffered -E '^\[bench|^=== GUEST|QEMU' |
		sed -u "s/^/         $k: /"
	grep -q '^=== GUEST END rc=0 ===' "$log" ||
		{ say "kernel $k: the guest failed, see $log"; tail -n 5 "$log"; exit 1; }
	say "kernel $k: done"
}

rm -f $out/log-*.[0-9]*.log
for k in $kernels; do
	boot $k $out/log-$k.log
done
# TCG's load cost moves by one to five percent from one boot of a kernel to
# the next: more boots of the two kernels compared, the later ones reversed
for ((i = 2; i <= repeat; i++)); do
	for k in patched base; do
		case " $kernels " in *" $k "*) boot $k $out/log-$k.$i.log "-w crs" ;; esac
	done
done
say "report: $out/report.md"
python3 bench/report.py $out $kernels
for g in $out/*.gp; do gnuplot "$g"; done
ls $out/*.svg | sed 's/^/         plot: /'
say "make bench done"
