#!/bin/bash
# Hibernation cycles, a boot each:
#   hibernate.sh BZIMAGE INITRAMFS LOG CYCLES [RUNNER_ARG...]
#
# Boot 1 runs the runner's hibernation test on a fresh swap disk, the
# 1 GiB sparse file DISK (environment); the test hibernates CYCLES times.
# Each boot after it resumes the image the one before wrote (guest_resume
# in guest/init), and the resumed test goes on.  Every boot but the last must end in an image
# written ("cycle N: hibernating", no end marker); boot N+1 must show cycle
# N resumed.  A boot that resumed nothing, or stopped without an image,
# fails, naming the boot and its log.  The boots' logs are LOG.boot1 ...;
# LOG gets them all, in order, for guest/check-log.sh, which judges the
# run as a whole.
# HIBERNATE_LOSE_IMAGE=1 wipes the disk after boot 1, so that boot 2 finds
# no image: the harness checks that this fails (make test-harness).
set -o pipefail
kernel=$1 initrd=$2 log=$3 cycles=$4
shift 4
args=$( (($#)) && printf ',%s' "$@")
dir=$(dirname "$0")
disk=${DISK:?DISK=swap image path}
boot_log() { echo "${log%.log}.boot$1.log"; }

fail() {
	echo "FAIL: hibernation: $*"
	exit 1
}

rm -f "$disk" "${log%.log}".boot*.log
truncate -s 1G "$disk" || exit 1

for ((boot = 1; boot <= cycles + 1; boot++)); do
	this=$(boot_log "$boot")
	if ((boot == 1)); then
		"$dir/run-qemu.sh" "$kernel" "$initrd" "$this" no_console_suspend \
			"guest_cmd=runner,-t,hibernation,-a,hibernate-cycles=$cycles$args" || exit 1
	else
		"$dir/run-qemu.sh" "$kernel" "$initrd" "$this" no_console_suspend guest_resume || exit 1
		grep -q "hibernation test: cycle $((boot - 1)): resumed" "$this" ||
			fail "boot $boot did not resume cycle $((boot - 1))'s image: $(grep -m1 -e '^resume:' \
				-e 'Kernel panic' -e '^launcher: timeout' "$this" || echo 'see its log'): $this"
	fi
	if ((boot == 1)) && [ -n "$HIBERNATE_LOSE_IMAGE" ]; then
		truncate -s 0 "$disk" && truncate -s 1G "$disk" || exit 1
	fi
	# the run ended here: the last cycle, or a failure check-log.sh names
	if grep -q '^=== GUEST END' "$this" || ((boot == cycles + 1)); then
		break
	fi
	grep -q "hibernation test: cycle $boot: hibernating" "$this" ||
		fail "boot $boot stopped before hibernating (cycle $boot): $this"
	grep -q 'reboot: Power down' "$this" ||
		fail "boot $boot did not power off after writing its image: $this"
done
for ((b = 1; b <= boot; b++)); do
	echo "### boot $b: $(boot_log "$b")"
	cat "$(boot_log "$b")"
done > "$log"
