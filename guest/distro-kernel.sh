#!/bin/bash
# distro-kernel.sh DIR: Debian's own amd64 kernel package for the installed
# linux-source-6.1 (linux-image-6.1.0-N-amd64 of the same version, else the
# newest in the apt cache), downloaded and unpacked into DIR once, never
# installed.  Prints its release (6.1.0-N-amd64): DIR/boot/vmlinuz-RELEASE
# and DIR/boot/config-RELEASE.  make bench boots it; make test-debian builds
# the series with its configuration.
set -eo pipefail
dir=$1
[ -n "$dir" ] || { echo "usage: $0 DIR" >&2; exit 2; }
if ! ls "$dir"/boot/config-* >/dev/null 2>&1; then
	want=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	for p in $(apt-cache pkgnames linux-image-6.1.0- | grep -E '^linux-image-6\.1\.0-[0-9]+-amd64$' | sort -V); do
		v=$(apt-cache show --no-all-versions "$p" | awk '/^Version:/ { print $2 }')
		pkg=$p
		[ "$v" = "$want" ] && break
	done
	[ -n "$pkg" ] || { echo "$0: no linux-image-6.1.0-*-amd64 in the apt cache" >&2; exit 1; }
	mkdir -p "$dir/deb"
	(cd "$dir/deb" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >/dev/null)
	dpkg-deb -x "$dir"/deb/"$pkg"_*.deb "$dir"
fi
config=$(ls "$dir"/boot/config-* | sort -V | tail -n 1)
echo "${config##*/config-}"
