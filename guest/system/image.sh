#!/bin/bash
# The real Debian 12 system (make system-image), in two steps:
#
#   image.sh base BASE RELEASE
#       mmdebstrap --variant=minbase into the directory BASE:
#       guest/system/packages and Debian's
#       linux-image-RELEASE (its postinst makes the initrd), from the apt
#       sources this machine uses (/etc/apt/sources.list.d/*.sources).
#       Minutes and a few hundred MB of downloads: make keeps it until the
#       package list changes.
#   image.sh disk BASE DIR [--bin FILE]... DEB...
#       A copy of BASE, the .debs (ours, from make deb) installed with
#       dpkg -i as a user would (initramfs-tools makes their initrd), the
#       payload (guest/system/payload, and each FILE: programs built here)
#       installed as a systemd unit, and
#       DIR/disk.img (ext4, 3 GiB, sparse) made from that tree with
#       mkfs.ext4 -d, no loop mount.  Every kernel and initrd on the disk
#       is copied to DIR/boot for QEMU's -kernel and -initrd.
#
# Needs root (the tree's owners are kept): make runs as root or through sudo.
set -eo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "image.sh: $*" >&2; exit 1; }

sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources; do
		[ -s "$f" ] && echo "$f"
	done
}

base() {
	local out=$1 release=$2 pkgs src
	[ -n "$out" ] && [ -n "$release" ] || die "usage: image.sh base BASE RELEASE"
	pkgs=$(grep -v -e '^#' -e '^$' "$here/packages" | paste -sd, -)
	# Debian's kernel of linux-source-6.1's version, not a newer one.
	pkgs+=",linux-image-$release=$(dpkg-query -W -f='${Version}' linux-source-6.1)"
	src=$(sources)
	[ -n "$src" ] || die "no apt sources on this machine"
	echo "  MMDEBSTRAP bookworm minbase: $pkgs"
	# The sources are files, pasted into the image's apt configuration.
	rm -rf "$out" "$out.tmp"
	mkdir -p "$(dirname "$out")"
	mmdebstrap --variant=minbase --format=directory --include="$pkgs" \
		--customize-hook='chroot "$1" apt-get clean' \
		bookworm "$out.tmp" $src
	mv "$out.tmp" "$out"
}

disk() {
	local base=$1 dir=$2 root deb bins=()
	shift 2
	[ -d "$base" ] && [ -n "$dir" ] || die "usage: image.sh disk BASE DIR [--bin FILE]... DEB..."
	while [ "$1" = --bin ]; do
		[ -x "$2" ] || die "no program $2"
		bins+=("$2")
		shift 2
	done
	root=$dir/root
	rm -rf "$root" "$dir/boot" "$dir/disk.img"
	mkdir -p "$dir/boot"
	cp -a "$base" "$root"
	mkdir -p "$root/tmp/debs"
	for deb; do cp "$deb" "$root/tmp/debs/"; done
	# dpkg and mkinitramfs want /proc, /sys and /dev: mounted in a mount
	# namespace of their own, so that nothing stays mounted on failure.
	unshare --mount --propagation private sh -ec '
		root=$1
		mount -t proc proc "$root/proc"
		mount -t sysfs sys "$root/sys"
		mount --bind /dev "$root/dev"
		if ls "$root"/tmp/debs/*.deb >/dev/null 2>&1; then
			chroot "$root" sh -c "dpkg -i /tmp/debs/*.deb"
		fi' sh "$root"
	rm -rf "$root/tmp/debs"
	payload "$root" "${bins[@]}"
	cp -L "$root"/boot/vmlinuz-* "$root"/boot/initrd.img-* "$dir/boot/"
	echo "  MKFS    $dir/disk.img: ext4, 3G, $(du -sh "$root" | cut -f1) of files"
	mkfs.ext4 -q -L debian -d "$root" "$dir/disk.img" 3G
	rm -rf "$root"
}

# The payload: guest/system/payload/run (and its helper) as a unit that starts once the
# system is up (multi-user), writes to the serial console and powers the
# machine off when it ends.  No getty on that console: its hangup would
# cut the unit's output.
payload() {
	local root=$1
	shift
	install -D -m 755 -t "$root/usr/local/lib/hugepack" "$here/payload/run" "$here/payload/mkrm" "$@"
	install -m 644 -t "$root/usr/local/lib/hugepack" "$here/../log-patterns" "$here/../log-allowed" \
		"$here/modules"
	install -D -m 644 "$here/payload/hugepack-system.service" \
		"$root/etc/systemd/system/hugepack-system.service"
	mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
	ln -sf ../hugepack-system.service \
		"$root/etc/systemd/system/multi-user.target.wants/hugepack-system.service"
	ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"
	echo debian-hugepack > "$root/etc/hostname"
	echo '/dev/vda / ext4 defaults 0 1' > "$root/etc/fstab"
}

cmd=$1
shift || true
case $cmd in
base) base "$@" ;;
disk) disk "$@" ;;
*) die "usage: image.sh base BASE RELEASE | disk BASE DIR [--bin FILE]... DEB..." ;;
esac
