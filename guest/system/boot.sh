#!/bin/bash
# boot.sh DIR RELEASE LOG [KERNEL ARGS...]: boots the real system's disk
# (DIR/disk.img, guest/system/image.sh) with kernel RELEASE and its initrd
# from that disk's /boot, systemd as PID 1, under guest/run-qemu.sh (2 GiB,
# -cpu max, TCG); the payload's unit powers it off.  The boot writes to a
# copy of the disk, so that every boot starts from the same image.
set -eo pipefail
dir=$1 release=$2 log=$3
shift 3 || { echo "usage: $0 DIR RELEASE LOG [ARGS...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
for f in "$dir/disk.img" "$dir/boot/vmlinuz-$release" "$dir/boot/initrd.img-$release"; do
	[ -r "$f" ] || { echo "boot.sh: no $f (make system-image)" >&2; exit 1; }
done
run=$dir/run-$release.img
trap 'rm -f "$run"' EXIT
cp --sparse=always "$dir/disk.img" "$run"
DISK=$run "$here/../run-qemu.sh" "$dir/boot/vmlinuz-$release" "$dir/boot/initrd.img-$release" \
	"$log" root=/dev/vda rw "$@"
