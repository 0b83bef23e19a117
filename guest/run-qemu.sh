#!/bin/bash
# Boots a kernel and initramfs under QEMU and keeps the serial log:
#   run-qemu.sh BZIMAGE INITRAMFS LOG [KERNEL ARGS...]
# Environment: KVM=0 (TCG, the default), 1 (KVM), auto (KVM if a short
# probe boot reaches /init); GUEST_TIMEOUT seconds (600).
# CLOCK=icount (TCG only, for timings): the guest's clock counts the
# instructions it runs, 1 ns each (-icount shift=0), and skips idle time,
# so a timing depends on the code the guest runs and not on the host or
# its load; SEED (1) seeds the guest's random numbers (-seed).  A short
# boot repeats to the digit; over a long bench two runs differ by up to 1%
# in a p50.  QEMU 7.2 hangs bringing up a second vCPU under icount, so
# such a guest has one.
# TCG_THREAD=single (TCG only): all vCPUs on one host thread.  QEMU 7.2's
# multi-threaded TCG does not make a vCPU see code that another vCPU
# rewrote: attaching a BPF trampoline (text_poke_bp()) while another vCPU
# runs the function oopses in int3, on the unpatched 6.1 too, and passes
# single-threaded.  The guest finds the mode on its command line
# (guest_accel=kvm|tcg-multi|tcg-single|tcg-icount).
#
# CPU: QEMU's CPU model (max: every feature TCG has); make test-tramp boots
# EPYC, an AMD Zen, whose bugs turn return thunks on.
#
# DISK: a raw disk image, attached as a virtio disk (/dev/vda in the
# guest): make test-hibernate's swap.
# DIMMS="ADDR:SIZE ...": pc-dimms at those guest-physical addresses, there
# from the start but not in the firmware's memory map: the guest adds them
# through ACPI memory hotplug and can eject them (make test-hotplug).  MAXMEM
# (required with DIMMS) sizes QEMU's hotplug area, which starts at 4 GiB, or
# at 1 TiB once it reaches beyond 1 TiB (then CPU needs phys-bits above 40).
# VMEM=ADDR:SIZE: a virtio-mem device of SIZE at guest-physical ADDR, all of
# it plugged at boot (requested-size SIZE; needs MAXMEM too).  The guest
# resizes it as a hypervisor would: a line "=== VMEM REQUEST <N>M ===" on its
# console becomes "qom-set" of the device's requested-size on QEMU's monitor,
# and the guest's driver plugs or unplugs memory to match (make test-hotplug).
# The monitor takes nothing else from the guest; what it printed ends the log.
# NUMA=N: N NUMA nodes (QEMU's ACPI SRAT), MEM split equally between them
# (QEMU 7.2 wants a memory backend per node), vCPU i on node i; nodes
# beyond the vCPUs have memory only.
#
# The guest shape is pinned here, in one place: the size of guest memory
# changes the shape of the direct map (1 GiB pages appear from 3 GiB), so
# every A/B run must boot the same machine.  MEM=4G is for make
# test-gbpages alone, which wants those 1 GiB pages.
MEM=${MEM:-2G}
MEM_ARG=$MEM
# The console prints at the kernel's default level (7: up to KERN_INFO, where
# kmemleak reports), and the log ring (128 KiB in these configs) is 16 MiB, so
# that what /dev/kmsg readers see since boot is never overwritten.
# LOG_BUF_LEN= (empty) boots with the configured ring: make test-harness.
LOG_BUF_LEN=${LOG_BUF_LEN-16M}
SMP=2
CPU=${CPU:-max}

kernel=$1 initrd=$2 log=$3
shift 3
timeout=${GUEST_TIMEOUT:-600}
kvm=${KVM:-0}
clock=${CLOCK:-host}

qemu() {
	accel=$1 limit=$2 out=$3
	shift 3
	timeout --foreground -k 5 "$limit" qemu-system-x86_64 \
		-machine q35 -accel "$accel" $CLOCK_ARGS -cpu "$CPU" -smp "$SMP$SMP_TOPO" -m "$MEM_ARG" \
		-nodefaults -display none -serial stdio -no-reboot \
		-kernel "$kernel" -initrd "$initrd" "${extra[@]}" \
		-append "console=ttyS0 panic=-1 ${LOG_BUF_LEN:+log_buf_len=$LOG_BUF_LEN} $*" \
		</dev/null >"$out" 2>&1
}

if [ "$kvm" = auto ]; then
	kvm=0
	if [ -w /dev/kvm ] && qemu kvm 20 "$log.probe" guest_cmd=true &&
	   grep -q '^=== GUEST START' "$log.probe"; then
		kvm=1
	fi
	rm -f "$log.probe"
fi
CLOCK_ARGS=
if [ "$kvm" = 1 ]; then
	accel=kvm mode=kvm
	[ "$CPU" = max ] && CPU=host
elif [ "$clock" = icount ]; then
	accel=tcg,thread=single mode=tcg-icount
	SMP=1
	CLOCK_ARGS="-icount shift=0,sleep=off,align=off -seed ${SEED:-1}"
elif [ "${TCG_THREAD:-multi}" = single ]; then
	accel=tcg,thread=single mode=tcg-single
else
	accel=tcg,thread=multi mode=tcg-multi
fi

# Disk and NUMA nodes: the probe boot above needs neither.
nodes=${NUMA:-1}
extra=()
# With nodes, each vCPU is a socket of its own, as on a real multi-socket
# machine: QEMU's default puts both vCPUs in one socket, sharing a last-level
# cache across two nodes, and the kernel WARNs at boot (topology_sane(),
# "llc-sibling CPU #0 is not on the same node").
SMP_TOPO=
[ "$nodes" -gt 1 ] && SMP_TOPO=",sockets=$SMP,cores=1,threads=1"
[ -n "$DISK" ] && extra+=(-drive "file=$DISK,format=raw,if=virtio")
# A guest larger than the host's memory (make measure-collapse boots 64 GiB
# on 24): Linux refuses to commit that much at once, so its RAM is mapped
# without a reservation (reserve=off); QEMU touches only what the guest uses.
if [ "$nodes" = 1 ] && [ "${MEM%G}" != "$MEM" ] && [ "${MEM%G}" -ge 16 ]; then
	extra+=(-object "memory-backend-ram,id=ram0,size=$MEM,reserve=off" -machine memory-backend=ram0)
fi
if [ -n "$DIMMS$VMEM" ]; then
	[ -n "$MAXMEM" ] || { echo "run-qemu.sh: DIMMS and VMEM need MAXMEM" >&2; exit 2; }
	set -f
	dimms=($DIMMS)
	set +f
	MEM_ARG="$MEM,slots=${#dimms[@]},maxmem=$MAXMEM"
	for ((n = 0; n < ${#dimms[@]}; n++)); do
		extra+=(-object "memory-backend-ram,id=dimm$n,size=${dimms[n]#*:}"
			-device "pc-dimm,id=dimm$n,memdev=dimm$n,addr=${dimms[n]%%:*}")
	done
fi
# QEMU's monitor (a "pipe" chardev): it reads the FIFO $mon.in and writes
# the file $mon.out, both opened read-write, so neither open waits.
mon=
if [ -n "$VMEM" ]; then
	mon=$(mktemp -d)/monitor
	trap 'rm -rf "${mon%/*}"' EXIT
	mkfifo "$mon.in" && : > "$mon.out" || exit 2
	extra+=(-object "memory-backend-ram,id=vmem-ram,size=${VMEM#*:}"
		-device "virtio-mem-pci,id=vmem0,memdev=vmem-ram,memaddr=${VMEM%%:*},requested-size=${VMEM#*:}"
		-chardev "pipe,id=monitor,path=$mon" -mon chardev=monitor,mode=readline)
fi
# The guest's resize requests, from its console to the monitor, or nothing.
requests() {
	if [ -z "$mon" ]; then
		cat
		return
	fi
	# (opened read-write, a write never waits for QEMU, even once it is gone)
	tee >(exec 3<>"$mon.in" >/dev/null
		grep --line-buffered -o '=== VMEM REQUEST [0-9]*M ===' | while read -r _ _ _ size _; do
			echo "qom-set /machine/peripheral/vmem0 requested-size $size" >&3
		done)
}
if [ "$nodes" -gt 1 ]; then
	node_mb=$((${MEM%G} * 1024 / nodes))
	for ((n = 0; n < nodes; n++)); do
		extra+=(-object "memory-backend-ram,id=mem$n,size=${node_mb}M"
			-numa "node,nodeid=$n,memdev=mem$n$( ((n < SMP)) && echo ",cpus=$n")")
	done
fi

start=$(date +%s)
# The log keeps everything; the terminal shows what the guest's /init prints.
set -o pipefail
qemu "$accel" "$timeout" /dev/stdout guest_accel=$mode "$@" | sed -u 's/\r//g' | tee "$log" | requests |
	sed -u -n '/^=== GUEST START/,/^=== GUEST END/p'
rc=${PIPESTATUS[0]}
# The monitor's readline echoes each key with its cursor moves: the last
# echo of a line is the whole command.
[ -n "$mon" ] && tr -d '\r' < "$mon.out" | sed 's/.*\x1b\[D//; s/\x1b\[K//g; /^\((qemu) *\)\?$/d; s/^/launcher: monitor: /' >> "$log"
elapsed=$(($(date +%s) - start))
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "launcher: timeout: the guest ran past ${timeout} s and was killed" >>"$log"
elif [ "$rc" != 0 ]; then
	echo "launcher: qemu exited $rc" >>"$log"
fi
echo "launcher: $mode guest, $MEM, $SMP vCPUs${NUMA:+, $nodes nodes}${DIMMS:+, DIMMs $DIMMS}${VMEM:+, virtio-mem $VMEM}${DISK:+, disk $DISK}, ${elapsed} s${CLOCK_ARGS:+ ($CLOCK_ARGS)}" >>"$log"
echo "  QEMU    $(basename "$log"): $mode, ${elapsed} s"
