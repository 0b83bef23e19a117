# Huge-page BPF program packs for Debian's linux-source-6.1, and the QEMU
# pipeline that proves what they do.  `make help` lists the targets.
#
#   source -> patch -> config -> kernel -> selftests -> initramfs -> run -> check
#
# Every output is a file under build/; a failed step deletes its output.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DELETE_ON_ERROR:
# Keep the intermediate files of the pattern chain (.source, kmod/.built, ...).
.SECONDARY:
.NOTPARALLEL:
.DEFAULT_GOAL := all

B := build
SRC_TAR ?= /usr/src/linux-source-6.1.tar.xz
KERNELS := base patched
JOBS ?= 3
# Guest runs: KVM=0|1|auto, GUEST_TIMEOUT seconds (guest/run-qemu.sh).
export KVM ?= 0
export GUEST_TIMEOUT ?= 600
# The slow suites' boots, about 1.5 times their measured runs (docs/testing.md): the
# debug suite 1,119 s, test_progs on the debug kernel 200 s, the Debian
# suite 640 s.  A hang then fails with check-log.sh's diagnosis, inside CI's
# 90 minutes.
DEBUG_TIMEOUT ?= 1800
DEBUG_UPSTREAM_TIMEOUT ?= 600
DEBIAN_TIMEOUT ?= 1000
# The demo's churn, as the guest's /init takes it (',' for ' ').
CHURN ?= churn,-n,5000,-r,8,-k
V ?= 0
, := ,
Q := $(if $(filter 1,$(V)),,@)

DEB_PACKAGES := linux-source-6.1 build-essential flex bison bc libelf-dev libssl-dev \
	dwarves python3 cpio xz-utils busybox-static qemu-system-x86 libbpf-dev \
	zlib1g-dev libzstd-dev gnuplot-nox clang llvm bpftool git mmdebstrap e2fsprogs \
	rsync kmod fakeroot dpkg-dev
CROSS_PACKAGES := gcc-aarch64-linux-gnu gcc-s390x-linux-gnu gcc-riscv64-linux-gnu
# apt-get needs root: as another user, make deps runs it through sudo, which
# must not ask for a password (nobody types one in CI; -n fails instead).
SUDO := $(if $(filter 0,$(shell id -u)),,sudo -n)
# Fails, before apt-get, when packages $(1) are missing and make can get no root.
need_root = $(if $(SUDO),sudo -n true 2>/dev/null || { \
	echo "make deps: not installed: $(1)"; \
	echo "  Installing needs root or passwordless sudo (sudo -n true failed): run make as root$(,)"; \
	echo "  let $$(id -un) sudo without a password$(,) or as root: apt-get install $(1)"; exit 1; };)

# The patches of the series, in order (the cover letter is not one).
PATCHES := $(addprefix patches/,$(shell sed -e '/^\#/d' -e '/^$$/d' patches/series))
KMOD_SRCS := $(wildcard selftests/kmod/*.[ch]) selftests/kmod/Kbuild
# The guest's binaries, whose BPF C programs are built against the patched
# kernel's BTF, and the host's.
GUEST_BINS := $(B)/selftests/runner $(B)/selftests/churn $(B)/selftests/fragment
HOST_BINS := $(B)/selftests/host_runner

T0 := $(shell date +%s)
stage = @printf '[%4ds] %s\n' $$(( $$(date +%s) - $(T0) )) "$(1)"
# Kernel make, quiet, output in build/logs; prints a line per 500 it logs.
kmake = $(MAKE) -C $(B)/$(1)/linux ARCH=x86_64 $(2) 2>&1 | tee -a $(B)/logs/build-$(1).log | \
	awk 'NR % 500 == 0 { printf "         ... %d lines of kernel build output\n", NR; fflush() }'
guest_run = guest/run-qemu.sh $(B)/$(1)/bzImage $(B)/$(1)/initramfs.cpio $(B)/logs/$(2).log $(3)
# A recorded suite (guest/stamp.sh): run $(3) unless the record $(1) was
# written on these inputs $(2).  The source they include is there first
# (deps, build/source-version); stamp.sh check says which inputs changed.
run_if_changed = $(MAKE) -s $(B)/source-version && \
	if $(call stamp,check,$(3)) $(1) $(2); then :; else \
	echo "$(notdir $(1)): not current (above): make $(3)"; $(MAKE) $(3); fi
# guest/stamp.sh $(1) for the suite make $(2) runs: the tarball it hashes,
# when this make started (an input file modified since refuses the record)
# and what of the run was overridden (refuses it too).
stamp = SRC_TAR=$(SRC_TAR) STAMP_RERUN='make $(2)' STAMP_T0=$(T0) \
	STAMP_OVERRIDES='$(stamp_overrides)' guest/stamp.sh $(1)
# Set in the environment or on the command line, these change what a
# recorded suite runs (guest/run-qemu.sh reads the first eleven): its record
# is not written then.
STAMP_ENV_VARS := KVM CPU MEM NUMA TCG_THREAD CLOCK SEED DISK DIMMS VMEM MAXMEM RUNNER_ARGS
STAMP_MAKE_VARS := THUNK_BOOT UPSTREAM_DENY UPSTREAM_TESTS DEBIAN_BOOT CHURN PATCHES SUITE_SRCS \
	DEBIAN_CONFIG fragments
stamp_overrides = $(strip \
	$(foreach v,$(STAMP_ENV_VARS),$(if $(filter-out $(if $(filter KVM,$(v)),0),$($(v))),$(v)=$($(v)))) \
	$(foreach v,$(STAMP_MAKE_VARS) $(filter %_INPUTS,$(.VARIABLES)),\
		$(if $(filter command override,$(firstword $(origin $(v)))),$(v)=$($(v)))))

.PHONY: all deps deps-cross kernel check-series check-cross check-cross-if-changed check-style series-tree selftests demo demo-fragmented test test-host test-pack test-guest test-nohuge test-tramp test-gbpages test-pagealloc test-hotplug measure-collapse test-heal-base test-exec-base test-upstream test-hibernate test-numa test-harness \
	test-debug test-debug-if-changed check-debug-record test-debian test-debian-if-changed check-debian-record \
	check-cross-record \
	deb system-image system-modules test-system check-system-record initramfs bench help clean FORCE
all: demo

help:
	@echo 'Targets (times: this 2-core machine, host otherwise idle; docs/testing.md):'
	@echo '  make             build both kernels, boot each with the churn demo, print the table'
	@echo '  make test        host tests, the guest suite on the patched kernel (normal and'
	@echo '                   nohugevmalloc boots), the trampoline and struct_ops tests with'
	@echo '                   retpolines and return thunks on (make test-tramp; TRAMP_KERNEL=base'
	@echo '                   for the unpatched kernel), 1 GiB pages (make test-gbpages),'
	@echo '                   upstream'"'"'s test_progs on patched (make test-upstream),'
	@echo '                   hibernation cycles (make test-hibernate), and the harness checking'
	@echo '                   itself (make test-harness) (~33 min from a clean clone)'
	@echo '  make demo-fragmented  load, free, fragment memory, load again, on both kernels:'
	@echo '                   patched must reuse its packs (no fallback, no split; FRAG_CHURN),'
	@echo '                   then, packs made anew as 4K fallbacks, end where the boot left it'
	@echo '  make kernel      $(B)/patched/bzImage (series applied) and $(B)/base/bzImage'
	@echo '  make deps        apt-get install what is missing (as root, or with passwordless sudo)'
	@echo '  make check-series  apply the series a patch at a time, building each step (23-80 min)'
	@echo '  make check-cross   the series a patch at a time for arm64, s390x and riscv64 with'
	@echo '                   Debian'"'"'s cross compilers (~14 min; CI does not rerun it:'
	@echo '                   make check-cross-record fails when guest/cross-tested is'
	@echo '                   not of the current inputs)'
	@echo '  make check-style   checkpatch --strict on the patches, kernel-doc on touched files'
	@echo '  make series-tree   $(B)/series-tree/linux: a git tree with the series as commits'
	@echo '  make test-guest  just the guest suite; RUNNER_ARGS="-t churn -v" picks tests'
	@echo '  make test-harness  the judges must fail a broken test, a panic, a hang, a WARN and'
	@echo '                   an oops in a kworker, a hung task, lost log records, a lost'
	@echo '                   hibernation image, and records that do not hold (guest/test-stamp.sh)'
	@echo '  make test-upstream  upstream'"'"'s test_progs (selftests/upstream/tests) on patched:'
	@echo '                   every test and subtest passes (UPSTREAM_KERNELS="base patched":'
	@echo '                   patched passes at least what base passes)'
	@echo '  make test-pack   the pack allocator host tests (make -C bpf-prog-pack bench|fuzz)'
	@echo '  make test-hibernate  hibernate and resume HIBERNATE_CYCLES times, a boot each, with'
	@echo '                   programs, packs and trampolines live (HIBERNATE_KERNEL=base too)'
	@echo '  make test-numa   the guest suite on 2- and 4-node NUMA guests (~15 min)'
	@echo '  make test-gbpages  a 4 GiB guest with 1 GiB direct-map pages and a 16 MiB exec pool:'
	@echo '                   packs split no 1 GiB page; a kdump kernel given the same'
	@echo '                   vmalloc_exec_pool= sets no pool aside (part of make test)'
	@echo '  make test-pagealloc  booted with debug_pagealloc=on: pages handed out are not'
	@echo '                   global, nothing collapses, the JIT and modules work (part of make test)'
	@echo '  make test-hotplug  two DIMMs and a virtio-mem device at 1 TiB, above a hole: the'
	@echo '                   collapse keeps their 2M entries, a DIMM ejects, virtio-mem'
	@echo '                   unplugs and plugs again cleanly; then a 16 GiB guest (part of make test)'
	@echo '  make measure-collapse  on a 64 GiB guest: how long a vfree() takes, and the'
	@echo '                   longest hold of cpa_lock and pgd_lock by a collapse (traced)'
	@echo '  make test-heal-base  direct_map_heal on the unpatched kernel, for its numbers'
	@echo '  make test-exec-base  exec_pages (modules, kprobes, ftrace) on the unpatched kernel'
	@echo '  make test-debug  the guest suite and test_progs on a KASAN, lockdep, DEBUG_VM,'
	@echo '                   kmemleak kernel, on 2 NUMA nodes (~45 min with its build;'
	@echo '                   CI does not rerun it: make check-debug-record fails when'
	@echo '                   guest/debug-tested is not of the current inputs)'
	@echo '  make test-debian the guest suite on the series built with Debian'"'"'s'
	@echo '                   configuration, on a 4-node AMD guest (~25 min with its build;'
	@echo '                   CI does not rerun it: make check-debian-record fails when'
	@echo '                   guest/debian-tested is not of the current inputs)'
	@echo '  make deb         the series as Debian'"'"'s kernel package (bindeb-pkg, Debian'"'"'s'
	@echo '                   configuration, the modules in guest/system/modules): $(B)/deb/*.deb'
	@echo '                   (~20 min)'
	@echo '  make system-image  a Debian 12 disk (mmdebstrap: systemd, libbpf-tools, bpftrace)'
	@echo '                   with Debian'"'"'s kernel and ours installed by dpkg (~3 min)'
	@echo '  make test-system the real system booted on each kernel: systemd'"'"'s BPF, BPF LSM,'
	@echo '                   libbpf-tools, bpftrace, module churn; the direct map on both (~10 min;'
	@echo '                   CI does not rerun it: make check-system-record fails when'
	@echo '                   guest/system-tested is stale; docs/system.md)'
	@echo '  make system-modules  guest/system/modules from what Debian'"'"'s kernel loads there'
	@echo '  make bench       base, patched and the Debian binary kernel side by side: churn, scale to'
	@echo '                   100k programs, random churn, trampoline attach/detach, timed in'
	@echo '                   guest instructions (icount);'
	@echo '                   $(B)/bench/report.md, *.csv, *.svg (~18 min)'
	@echo '  make clean       remove $(B)/'
	@echo 'Variables:'
	@echo '  SRC_TAR=$(SRC_TAR)'
	@echo '  JOBS=$(JOBS) KVM=$(KVM) GUEST_TIMEOUT=$(GUEST_TIMEOUT) V=$(V)'
	@echo '  CHURN=$(CHURN)'
	@echo '  FRAG_CHURN=$(FRAG_CHURN)'
	@echo '  series: $(words $(PATCHES)) patch(es) in patches/series'

# apt-get install what of $(1) is missing
define install_missing
	$(Q)missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		$(call need_root,$$missing) \
		echo "  DEPS    installing:" $$missing; \
		$(SUDO) apt-get update -q; \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call install_missing,$(DEB_PACKAGES))

# Only the cross-build check needs these.
deps-cross:
	$(call install_missing,$(CROSS_PACKAGES))

$(B)/logs:
	$(Q)mkdir -p $@

# The source tarball comes with linux-source-6.1, which deps installs: make
# must not give up on it before deps has run.
$(SRC_TAR): | deps
	$(Q)test -f $@ || { echo "no $@: linux-source-6.1 should have brought it (set SRC_TAR for another)"; exit 1; }

# --- source and series ---------------------------------------------------
# Each kernel gets its own unpacked tree; the patched one has the series on top.
$(B)/source-version: $(SRC_TAR) | deps $(B)/logs
	$(Q)v=$$(tar -xOJf $(SRC_TAR) --occurrence=1 linux-source-6.1/Makefile | \
		awk '/^(VERSION|PATCHLEVEL|SUBLEVEL) =/ { printf "%s%s", sep, $$3; sep = "." }'); \
	echo "linux-source-6.1 $$(dpkg-query -W -f='$${Version}' linux-source-6.1), Linux $$v" > $@
	$(Q)echo "  SOURCE  $$(cat $@)"
	$(Q)guest/stamp.sh source-warn guest/*-tested

define unpack
	$(call stage,unpack $(SRC_TAR) for $(1))
	$(Q)rm -rf $(B)/$(1) && mkdir -p $(B)/$(1)
	$(Q)tar -xJf $(SRC_TAR) -C $(B)/$(1) && mv $(B)/$(1)/linux-source-6.1 $(B)/$(1)/linux
endef

$(B)/base/.source: $(B)/source-version
	$(call unpack,base)
	$(Q)cp $< $@

$(B)/series-check/.source: $(B)/source-version
	$(call unpack,series-check)
	$(Q)cp $< $@

# patched, and the same series under debug options (guest/debug.fragment),
# under Debian's configuration (make test-debian) and as a package (make deb)
$(B)/patched/.source $(B)/debug/.source $(B)/debian/.source $(B)/deb/.source: $(B)/%/.source: $(B)/source-version patches/series $(PATCHES)
	$(call unpack,$*)
	$(Q)guest/apply-series.sh patches $(B)/$*/linux
	$(Q)cp $< $@

# --- config and kernel ---------------------------------------------------
# tinyconfig for x86_64 (without ARCH=x86_64 it is a 32-bit kernel), the
# fragments on top, then a check that every option asked for survived.
fragments = guest/config.fragment $(if $(filter debug,$(1)),guest/debug.fragment)
.SECONDEXPANSION:
$(B)/%/linux/.config: $(B)/%/.source $$(call fragments,$$*) guest/check-config.sh
	$(call stage,configure $*: tinyconfig + $(call fragments,$*))
	$(Q)$(MAKE) -s -C $(B)/$*/linux ARCH=x86_64 tinyconfig > $(B)/logs/config-$*.log 2>&1
	$(Q)cd $(B)/$*/linux && scripts/kconfig/merge_config.sh -m .config \
		$(addprefix $(CURDIR)/,$(call fragments,$*)) >> $(CURDIR)/$(B)/logs/config-$*.log 2>&1
	$(Q)$(MAKE) -s -C $(B)/$*/linux ARCH=x86_64 olddefconfig >> $(B)/logs/config-$*.log 2>&1
	$(Q)for f in $(call fragments,$*); do guest/check-config.sh $$f $@; done

# Debian's configuration of this kernel (linux-image-6.1.0-N-amd64's, which
# guest/distro-kernel.sh unpacks) for two trees: make test-debian's, every
# module turned off (mod2noconfig: the guest loads none of Debian's) and
# what the tests need added back (guest/debian.fragment); make deb's, the
# modules a Debian 12 system loads (localmodconfig from guest/system/modules)
# and what a package built here needs (guest/deb.fragment).  Every hardening
# and mitigation option Debian builds in must survive (guest/hardening).
DEBIAN_CONFIG := guest/debian.fragment guest/hardening guest/check-config.sh guest/distro-kernel.sh
DEB_CONFIG := guest/deb.fragment guest/system/modules guest/hardening guest/check-config.sh \
	guest/distro-kernel.sh
$(B)/debian/linux/.config: config_modules := mod2noconfig
$(B)/debian/linux/.config: config_fragment := guest/debian.fragment
$(B)/debian/linux/.config: $(DEBIAN_CONFIG)
$(B)/deb/linux/.config: config_modules = LSMOD=$(CURDIR)/$(B)/deb.lsmod localmodconfig
$(B)/deb/linux/.config: config_fragment := guest/deb.fragment
$(B)/deb/linux/.config: $(DEB_CONFIG) $(B)/deb.lsmod
$(B)/debian/linux/.config $(B)/deb/linux/.config: $(B)/%/linux/.config: $(B)/%/.source
	$(call stage,configure $*: Debian's configuration + $(lastword $(config_modules)) + $(config_fragment))
	$(Q)r=$$(guest/distro-kernel.sh $(B)/distro) && cp $(B)/distro/boot/config-$$r $(B)/$*/config && \
		echo "  CONFIG  config-$$r of Debian's linux-image-$$r" | tee $(B)/logs/config-$*.log
	$(Q)cp $(B)/$*/config $@
	$(Q)$(MAKE) -s -C $(B)/$*/linux ARCH=x86_64 olddefconfig >> $(B)/logs/config-$*.log 2>&1
	$(Q){ yes '' || true; } | $(MAKE) -s -C $(B)/$*/linux ARCH=x86_64 $(config_modules) \
		>> $(B)/logs/config-$*.log 2>&1
	$(Q)cd $(B)/$*/linux && scripts/kconfig/merge_config.sh -m .config \
		$(CURDIR)/$(config_fragment) >> $(CURDIR)/$(B)/logs/config-$*.log 2>&1
	$(Q)$(MAKE) -s -C $(B)/$*/linux ARCH=x86_64 olddefconfig >> $(B)/logs/config-$*.log 2>&1
	$(Q)guest/check-config.sh $(config_fragment) $@
	$(Q)guest/check-config.sh --hardening guest/hardening $(B)/$*/config $@ | tee -a $(B)/logs/config-$*.log
	$(Q)echo "  CONFIG  $$(grep -c '=y$$' $@) options built in, $$(grep -c '=m$$' $@) modules" | \
		tee -a $(B)/logs/config-$*.log

$(B)/%/bzImage: $(B)/%/linux/.config
	$(call stage,build $* kernel (make -j$(JOBS) bzImage modules; log: $(B)/logs/build-$*.log))
	$(Q): > $(B)/logs/build-$*.log
	$(Q)$(call kmake,$*,-j$(JOBS) bzImage modules) || \
		{ tail -n 30 $(B)/logs/build-$*.log; echo "kernel build failed: $(B)/logs/build-$*.log"; exit 1; }
	$(Q)cp $(B)/$*/linux/arch/x86/boot/bzImage $@
	$(call stage,$@ ready ($$(cat $(B)/source-version)))

kernel: $(B)/patched/bzImage $(B)/base/bzImage

# --- the kernel package and the real Debian system ------------------------
# make deb: the series as Debian's kernel package, built with the kernel's
# own bindeb-pkg on Debian's configuration, modules cut to those a Debian 12
# system loads (guest/system/modules; guest/deb.fragment says why), named
# beside Debian's: linux-image-6.1.0-N-hugepack-amd64, version
# <linux-source-6.1's>+hugepack1.  The .debs land in $(B)/deb/.  (KVM, the
# guest runs' accelerator, would name arch/x86/kvm's source directory.)
# localmodconfig reads lsmod's output: the list without its comments.
$(B)/deb.lsmod: guest/system/modules
	$(Q)grep -v '^#' $< > $@

$(B)/deb/debs: $(B)/deb/linux/.config
	$(Q)r=$$(guest/distro-kernel.sh $(B)/distro) && echo "$${r%-amd64}-hugepack-amd64" > $(B)/deb/release && \
		echo "$$(dpkg-query -W -f='$${Version}' linux-source-6.1)+hugepack1" > $(B)/deb/version
	$(call stage,build the package $$(cat $(B)/deb/release) $$(cat $(B)/deb/version) (make bindeb-pkg; log: $(B)/logs/build-deb.log))
	$(Q)rm -f $(B)/deb/*.deb $(B)/deb/*.buildinfo $(B)/deb/*.changes && : > $(B)/logs/build-deb.log
	$(Q)env -u KVM $(call kmake,deb,-j$(JOBS) bindeb-pkg KERNELRELEASE=$$(cat $(B)/deb/release) \
		KDEB_PKGVERSION=$$(cat $(B)/deb/version) KDEB_COMPRESS=gzip) || \
		{ tail -n 30 $(B)/logs/build-deb.log; echo "package build failed: $(B)/logs/build-deb.log"; exit 1; }
	$(Q)ls $(B)/deb/*.deb > $@
	$(Q)for d in $$(cat $@); do echo "  DEB     $$d ($$(du -h $$d | cut -f1))"; done

deb: $(B)/deb/debs

# make system-image: a Debian 12 disk made by mmdebstrap (guest/system/packages
# and Debian's linux-image-6.1.0-N-amd64 of the same source version) with our
# linux-image package installed by dpkg -i beside Debian's, and the test's
# payload as a systemd unit (guest/system/image.sh).  The mmdebstrap tree is
# kept until the package list changes.
$(B)/system/base.done: guest/system/packages guest/system/image.sh guest/distro-kernel.sh | deps $(B)/logs
	$(call stage,Debian 12 system: mmdebstrap (log: $(B)/logs/system-base.log))
	$(Q)guest/system/image.sh base $(B)/system/base $$(guest/distro-kernel.sh $(B)/distro) \
		> $(B)/logs/system-base.log 2>&1 || { tail -n 20 $(B)/logs/system-base.log; exit 1; }
	$(Q)chroot $(B)/system/base dpkg-query -W > $@

# The BPF LSM test's program (selftests/lsm_deny.c), built by selftests/Makefile
# against our kernel's BTF; selftests/Makefile knows when it is out of date.
$(B)/system/selftests/lsm_deny: FORCE $(B)/deb/debs | deps
	$(Q)$(MAKE) -s -C selftests OUTPUT=$(CURDIR)/$(B)/system/selftests V=$(V) \
		VMLINUX=$(CURDIR)/$(B)/deb/linux/vmlinux $(CURDIR)/$@

$(B)/system/disk/disk.img: $(B)/system/base.done $(B)/deb/debs $(B)/system/selftests/lsm_deny guest/system/image.sh \
		guest/system/payload/*
	$(call stage,Debian 12 system: our package installed$(,) the disk made)
	$(Q)guest/system/image.sh disk $(B)/system/base $(B)/system/disk --bin $(B)/system/selftests/lsm_deny \
		$(B)/deb/linux-image-$$(cat $(B)/deb/release)_*.deb > $(B)/logs/system-disk.log 2>&1 || \
		{ tail -n 20 $(B)/logs/system-disk.log; exit 1; }
	$(Q)grep -E '^  MKFS|^Setting up linux-image|update-initramfs' $(B)/logs/system-disk.log | sed 's/^ */  /'

system-image: $(B)/system/disk/disk.img

# The modules Debian's kernel loads on that system, for make deb (the list
# keeps its comment and its churn modules).
system-modules: $(B)/system/disk/disk.img
	$(Q)guest/system/boot.sh $(B)/system/disk $$(guest/distro-kernel.sh $(B)/distro) \
		$(B)/logs/system-modules.log hugepack.mode=modules > /dev/null
	$(Q){ sed '/^[^#]/,$$d' guest/system/modules; \
		sed -n '/^=== MODULES START/,/^=== MODULES END/p' $(B)/logs/system-modules.log | \
		tr -d '\r' | grep -v '^===' | grep -v '^\['; \
		sed -n '/^# --- /,$$p' guest/system/modules; } > $(B)/system-modules.new
	$(Q)if cmp -s $(B)/system-modules.new guest/system/modules; then \
		echo "guest/system/modules: the same $$(grep -vc '^#' guest/system/modules) modules"; \
		rm $(B)/system-modules.new; \
	else mv $(B)/system-modules.new guest/system/modules && git diff --stat -- guest/system/modules; fi

# make test-system: the real system booted from that disk with Debian's kernel,
# then with ours, the payload (guest/system/payload/run) run by systemd on
# each: systemd's own BPF, libbpf-tools, bpftrace, module churn, the direct
# map read after each.  guest/system/table.sh makes the table of both.  A
# ~20-minute build and two ~8-minute boots: recorded in guest/system-tested,
# which CI checks (check-system-record) but does not rerun.
SYSTEM_TIMEOUT ?= 1500
# The function tracer on flush_tlb_all() from boot, with stack traces: the
# payload names each direct-map split by its cause (guest/system/payload/run).
SYSTEM_TRACE := ftrace=function ftrace_filter=flush_tlb_all trace_options=func_stack_trace \
	trace_buf_size=4M
SYSTEM_INPUTS := patches/series $(PATCHES) guest/apply-series.sh $(DEB_CONFIG) guest/system/packages \
	guest/system/image.sh guest/system/boot.sh guest/system/table.sh $(wildcard guest/system/payload/*) \
	selftests/Makefile selftests/lsm_deny.c selftests/progs/lsm_deny.bpf.c \
	guest/run-qemu.sh guest/check-log.sh guest/log-patterns guest/log-allowed guest/summary.sh \
	guest/system/expect distro-image rule:test-system \
	rule:$(B)/deb/linux/.config rule:$(B)/deb/debs rule:$(B)/system/selftests/lsm_deny rule:$(B)/system/base.done \
	rule:$(B)/system/disk/disk.img 'SYSTEM_TIMEOUT=$(SYSTEM_TIMEOUT)' 'SYSTEM_TRACE=$(SYSTEM_TRACE)' \
	pkg:mmdebstrap tool:qemu-system-x86_64 tool:clang pkg:libbpf-dev
test-system: $(B)/system/disk/disk.img
	$(Q)$(call stamp,begin,$@) guest/system-tested $(SYSTEM_INPUTS)
	$(call stage,the real system on Debian's kernel)
	$(Q)r=$$(guest/distro-kernel.sh $(B)/distro) && GUEST_TIMEOUT=$(SYSTEM_TIMEOUT) \
		guest/system/boot.sh $(B)/system/disk $$r $(B)/logs/system-debian.log $(SYSTEM_TRACE) > /dev/null
	$(Q)guest/check-log.sh $(B)/logs/system-debian.log runner guest/system/expect
	$(call stage,the real system on ours ($$(cat $(B)/deb/release)))
	$(Q)GUEST_TIMEOUT=$(SYSTEM_TIMEOUT) guest/system/boot.sh $(B)/system/disk $$(cat $(B)/deb/release) \
		$(B)/logs/system-patched.log $(SYSTEM_TRACE) > /dev/null
	$(Q)guest/check-log.sh $(B)/logs/system-patched.log runner guest/system/expect
	$(Q)guest/system/table.sh $(B)/logs/system-debian.log $(B)/logs/system-patched.log | \
		tee $(B)/logs/system-table.md
	$(Q)guest/summary.sh $(B)/logs/system-debian.log $(B)/logs/system-patched.log | tee $(B)/logs/system-summary.log
	$(Q){ sed 's/^/### /' $(B)/system/base.done | grep -E ' (systemd|libbpf-tools|bpftrace|bpftool|linux-image-[^ ]*)\s'; \
		cat $(B)/logs/system-debian.log $(B)/logs/system-patched.log $(B)/logs/system-table.md \
		$(B)/logs/system-summary.log; } > $(B)/logs/system-all.log && \
		$(call stamp,write,$@) guest/system-tested $(B)/logs/system-all.log $(SYSTEM_INPUTS)

# Bisectability: one tree, the series applied a patch at a time, a build after each.
check-series:
	$(Q)rm -rf $(B)/series-check
	$(Q)$(MAKE) -s $(B)/series-check/linux/.config
	$(Q)n=0; for p in $$(sed -e '/^#/d' -e '/^$$/d' patches/series); do n=$$((n + 1)); \
		printf '[%4ds] series step %d: %s\n' $$(( $$(date +%s) - $(T0) )) $$n $$p; \
		patch -d $(B)/series-check/linux -p1 --forward --batch -s < patches/$$p || \
			{ echo "series: patch $$n, $$p, does not apply"; exit 1; }; \
		$(MAKE) -s -C $(B)/series-check/linux ARCH=x86_64 -j$(JOBS) bzImage modules \
			> $(B)/logs/series-check-$$n.log 2>&1 || \
			{ tail -n 20 $(B)/logs/series-check-$$n.log; \
			  echo "series: step $$n, $$p, does not build"; exit 1; }; \
		if grep -E '(warning|error):' $(B)/logs/series-check-$$n.log; then \
			echo "series: step $$n, $$p, builds with warnings"; exit 1; fi; \
	done; echo "series: all $$n steps build without warnings"

# Other architectures Debian ships: the series a patch at a time, the
# directories it touches built with Debian's cross compilers.  Too slow for
# every CI run, so a pass is recorded in guest/cross-tested, which CI checks
# (check-cross-record) but does not rerun; check-cross-if-changed runs it
# when what it builds changed: the series, the source, the compilers
# (guest/stamp.sh describes the items).
CROSS_INPUTS := patches/series $(PATCHES) guest/cross.fragment guest/cross-build.sh guest/check-config.sh \
	rule:check-cross tool:gcc $(addprefix pkg:,$(CROSS_PACKAGES) $(CROSS_PACKAGES:gcc-%=gcc-12-%) \
	$(CROSS_PACKAGES:gcc-%=binutils-%))

check-cross: $(SRC_TAR) | deps-cross $(B)/logs
	$(Q)$(MAKE) -s $(B)/source-version && $(call stamp,begin,$@) guest/cross-tested $(CROSS_INPUTS)
	$(call stage,cross-build the series for arm64$(,) s390x and riscv64 (guest/cross-build.sh))
	$(Q)JOBS=$(JOBS) guest/cross-build.sh $(SRC_TAR) $(B)/cross | tee $(B)/logs/cross.log
	$(Q)$(call stamp,write,$@) guest/cross-tested $(B)/logs/cross.log $(CROSS_INPUTS)

check-cross-if-changed:
	$(Q)$(call run_if_changed,guest/cross-tested,$(CROSS_INPUTS),check-cross)

# A git tree with the series as commits, to work on it: edit, commit, then
# git format-patch -o ../../../patches base..HEAD from $(B)/series-tree/linux.
series-tree: $(B)/source-version
	$(Q)rm -rf $(B)/series-tree
	$(call unpack,series-tree)
	$(Q)cd $(B)/series-tree/linux && git init -q && git add -f -A && \
		git -c user.name=base -c user.email=base@localhost commit -qm "$$(cat $(CURDIR)/$<)" && \
		git tag base && git -c user.name=series-tree -c user.email=series-tree@localhost \
		am -q $$(sed -e '/^#/d' -e '/^$$/d' -e 's|^|$(CURDIR)/patches/|' \
		$(CURDIR)/patches/series) && git log --oneline base..HEAD

# checkpatch --strict on the series, kernel-doc on the files it touches.
# checkpatch reads a file git tracks as source, not as a patch: hide the repo.
check-style: $(B)/patched/.source
	$(Q)GIT_DIR=/nonexistent $(B)/patched/linux/scripts/checkpatch.pl --strict --no-tree --terse --show-types \
		$$(sed -e '/^#/d' -e '/^$$/d' -e 's|^|patches/|' patches/series)
	$(Q)cd $(B)/patched/linux && scripts/kernel-doc -none -Werror $$(cd $(CURDIR) && \
		sed -n 's|^+++ b/\(.*\.[ch]\)$$|\1|p' $$(sed -e '/^#/d' -e '/^$$/d' \
		-e 's|^|patches/|' patches/series) | sort -u)
	$(Q)echo "style: checkpatch --strict and kernel-doc clean"

# --- selftests and initramfs ---------------------------------------------
# selftests/Makefile knows what is out of date; its outputs are restated after it.
selftests: $(GUEST_BINS) $(HOST_BINS)
$(GUEST_BINS) &: FORCE $(B)/patched/bzImage | deps
	$(Q)$(MAKE) -s -C selftests OUTPUT=$(CURDIR)/$(B)/selftests V=$(V) \
		VMLINUX=$(CURDIR)/$(B)/patched/linux/vmlinux $(abspath $(GUEST_BINS))
$(HOST_BINS): FORCE | deps
	$(Q)$(MAKE) -s -C selftests OUTPUT=$(CURDIR)/$(B)/selftests V=$(V) $(abspath $(HOST_BINS))
FORCE:

# The kernel's own test suites, built with the kernel (guest/config.fragment).
UPSTREAM_KMODS := test_bpf.ko test_vmalloc.ko

$(B)/%/kmod/.built: $(B)/%/bzImage $(KMOD_SRCS)
	$(call stage,build test modules against the $* tree)
	$(Q)$(MAKE) -s -C selftests kmod KDIR=$(CURDIR)/$(B)/$*/linux KMOD_OUT=$(CURDIR)/$(B)/$*/kmod
	$(Q)cp $(addprefix $(B)/$*/linux/lib/,$(UPSTREAM_KMODS)) $(B)/$*/kmod/
	$(Q)touch $@

$(B)/%/initramfs.cpio: $(B)/%/kmod/.built $(GUEST_BINS) guest/init guest/churn-fragmented \
		       guest/harness guest/initramfs.list
	$(Q)BUSYBOX=/bin/busybox GUEST=$(CURDIR)/guest SELFTESTS=$(CURDIR)/$(B)/selftests \
		KMOD=$(CURDIR)/$(B)/$*/kmod $(B)/$*/linux/usr/gen_init_cpio guest/initramfs.list > $@
	$(Q)echo "  CPIO    $@ ($$(du -k $@ | cut -f1) kB)"

initramfs: $(B)/patched/initramfs.cpio $(B)/base/initramfs.cpio

# Upstream's test_progs (selftests/upstream/), built once from the patched
# tree's tools/testing/selftests/bpf (the series does not touch tools/), so
# base and patched run the same binary; bpf_testmod.ko is built for each.
# Its files ride in a second cpio archive after the guest's own.
UPSTREAM_TESTS := $(shell sed -e 's/\#.*//' -e '/^ *$$/d' selftests/upstream/tests)
# Left out of every run, with why:
#  bpf_cookie/perf_event: a cpu-clock perf event in frequency mode (1,000 a
#  second); under TCG the period it adapts to after its first samples often
#  outlasts burn_cpu()'s loop, so the second program never runs.  It failed
#  on base as on patched (base 5 boots of 5, patched 3 of 4; it passes on
#  the slower debug kernel); libbpf's CI, in VMs, leaves it out too.  The
#  series treats a perf-event program's JIT image as any other.
UPSTREAM_DENY := bpf_cookie/perf_event
upstream_cmd = guest_cmd=test_progs$(foreach d,$(UPSTREAM_DENY),$(,)-d$(,)$(d))
$(B)/test_progs/test_progs: FORCE $(B)/patched/bzImage | deps
	$(Q)$(MAKE) -s -C selftests/upstream -j$(JOBS) TREE=$(CURDIR)/$(B)/patched/linux \
		VMLINUX=$(CURDIR)/$(B)/patched/linux/vmlinux OUTPUT=$(CURDIR)/$(B)/test_progs V=$(V)

$(B)/%/bpf_testmod/bpf_testmod.ko: $(B)/%/bzImage
	$(call stage,build bpf_testmod.ko against the $* tree)
	$(Q)$(MAKE) -s -C selftests/upstream bpf_testmod KDIR=$(CURDIR)/$(B)/$*/linux \
		MOD_OUT=$(CURDIR)/$(B)/$*/bpf_testmod

$(B)/%/initramfs-upstream.cpio: $(B)/%/initramfs.cpio $(B)/test_progs/test_progs \
				 $(B)/%/bpf_testmod/bpf_testmod.ko
	$(Q)MOD=$(CURDIR)/$(B)/$*/bpf_testmod $(B)/$*/linux/usr/gen_init_cpio \
		$(B)/test_progs/initramfs.list | cat $< - > $@
	$(Q)echo "  CPIO    $@ ($$(du -k $@ | cut -f1) kB)"

# --- runs ----------------------------------------------------------------
# Both boots count time in guest instructions (CLOCK=icount: one vCPU, 1 us
# is 1,000 instructions), so us_per_load compares the kernels, not the host's
# load at the time.
demo: $(B)/base/initramfs.cpio $(B)/patched/initramfs.cpio
	$(call stage,churn demo on base: $(CHURN))
	$(Q)CLOCK=icount $(call guest_run,base,churn-base,guest_cmd=$(CHURN))
	$(Q)guest/check-log.sh $(B)/logs/churn-base.log command
	$(call stage,churn demo on patched: $(CHURN))
	$(Q)CLOCK=icount $(call guest_run,patched,churn-patched,guest_cmd=$(CHURN))
	$(Q)guest/check-log.sh $(B)/logs/churn-patched.log command
	$(call stage,direct map before and after the churn (guest/churn-table.sh))
	$(Q)guest/churn-table.sh $(B)/logs/churn-base.log $(B)/logs/churn-patched.log

# Load, free, fragment, load again (guest/churn-fragmented), on both
# kernels: a peak of programs on memory as the boot left it, then fewer,
# in rounds, on memory with no free 2 MiB block left.  The patched kernel
# must take them into the packs it kept: no fallback pack, no direct-map
# split, DirectMap4k and ptdump's 4K direct-map entries unchanged.  Then
# the same rounds with the kept packs reclaimed and compaction off, so that
# packs are made anew (4K fallbacks) on fragmented memory; once everything
# is freed the patched kernel's direct map must be back where the boot
# left it (DirectMap4k, live 2M and 1G splits).
FRAG_CHURN ?= churn-fragmented,3500,3000,4
FRAG_KEYS := l2_splits l3_splits DirectMap4k_kB dmap_4K fallbacks
demo-fragmented: $(B)/base/initramfs.cpio $(B)/patched/initramfs.cpio
	$(Q)for k in $(KERNELS); do \
		printf '[%4ds] %s\n' $$(( $$(date +%s) - $(T0) )) "fragmented churn on $$k: $(FRAG_CHURN)"; \
		$(call guest_run,$$k,fragmented-$$k,guest_cmd=$(FRAG_CHURN)) && \
		guest/check-log.sh $(B)/logs/fragmented-$$k.log command || exit 1; \
	done
	$(call stage,the direct map across the fragmented churn (guest/churn-table.sh))
	$(Q)guest/churn-table.sh $(foreach k,$(KERNELS),$(B)/logs/fragmented-$(k).log) | \
		tee $(B)/logs/fragmented-table.log
	$(Q)grep -q '^fragment: buddyinfo after (0 free 2 MiB blocks)' $(B)/logs/fragmented-patched.log || \
		{ echo 'demo-fragmented: a free 2 MiB block was left: memory was not fragmented'; exit 1; }
	$(Q)awk -v keys='$(FRAG_KEYS)' 'BEGIN { n = split(keys, k); for (i = 1; i <= n; i++) want[k[i]] = 1 } \
		$$1 in want { seen++; if ($$7 != "+0") { print "demo-fragmented: patched " $$1 " moved by " $$7; bad = 1 } } \
		END { if (seen != n) { print "demo-fragmented: patched rows missing"; bad = 1 } exit bad }' \
		$(B)/logs/fragmented-table.log
	$(Q)echo 'demo-fragmented: patched: no fallback, no split, DirectMap4k unchanged'
	$(Q)for k in $(KERNELS); do \
		guest/boot-to-end.sh $$([ $$k = patched ] && echo -s) $$k $(B)/logs/fragmented-$$k.log || exit 1; \
	done

test-host: $(HOST_BINS) | $(B)/logs
	$(call stage,host tests)
	$(Q)cd selftests && $(CURDIR)/$(B)/selftests/host_runner $(RUNNER_ARGS) | tee $(CURDIR)/$(B)/logs/host.log

# The pack allocator's host bench: kernel/bpf/prog_pack.c of the patched tree in user space.
test-pack: $(B)/patched/.source | $(B)/logs
	$(call stage,pack allocator host tests (bpf-prog-pack/))
	$(Q)$(MAKE) -s -C bpf-prog-pack test OUTPUT=$(CURDIR)/$(B)/bpf-prog-pack | tee $(B)/logs/pack.log

RUNNER_ARGS ?=
# The runner's command line: $(1) the tests (-t) a boot runs when
# RUNNER_ARGS picks none, $(2) its -a words (an -a each: guest/init turns
# every comma into a space, and the runner joins its -a's).  A kernel with the series says
# expect-patched: there a missing pack statistic, debugfs file or collapse
# counter fails a test instead of switching its assertion off.
runner_cmd = guest_cmd=runner$(if $(RUNNER_ARGS),$(shell printf ',%s' $(RUNNER_ARGS)),$(subst $() ,,$(foreach t,$(1),$(,)-t$(,)$(t))))$(subst $() ,,$(foreach a,$(2),$(,)-a$(,)$(a)))
# The list of results a boot must print (guest/check-log.sh), unless
# RUNNER_ARGS picked other tests.
expect = $(if $(RUNNER_ARGS),,guest/expect/$(1))

test-guest: $(B)/patched/initramfs.cpio
	$(call stage,guest suite on the patched kernel)
	$(Q)$(call guest_run,patched,guest-patched,$(call runner_cmd,,expect-patched))
	$(Q)guest/check-log.sh $(B)/logs/guest-patched.log runner $(call expect,guest-patched)

# Booted with nohugevmalloc, packs are 4K: the tests of what backs a pack
# and what it costs.  Stress that is the same on 4K packs (concurrency,
# struct_ops, tramp_churn, the kernel's own suites) is left to the boot above.
NOHUGE_TESTS := bad_input bpf_jit churn direct_map fault_injection kunit_vmalloc_huge module_space \
	no_wx pack_latency prog_pack tramp_correct vmalloc_ptdump kernel_log
test-nohuge: $(B)/patched/initramfs.cpio
	$(call stage,guest suite on the patched kernel booted with nohugevmalloc ($(words $(NOHUGE_TESTS)) tests))
	$(Q)$(call guest_run,patched,guest-nohuge,nohugevmalloc $(call runner_cmd,$(NOHUGE_TESTS),expect-patched))
	$(Q)guest/check-log.sh $(B)/logs/guest-nohuge.log runner $(call expect,guest-nohuge)

# The trampoline and struct_ops tests once more, on an AMD Zen guest (EPYC)
# booted with spectre_v2=retpoline: retpolines and return thunks on (the
# mitigations test asserts it), so that code encoding a wrong address for a
# thunk crashes.  Trampolines are attached while other vCPUs run the traced
# code: QEMU's multi-threaded TCG does not honour cross-modifying code (the
# unpatched kernel oopses in int3 there), so this boot is single-threaded.
# TRAMP_KERNEL=base runs them on the unpatched kernel, where the direct map
# is only printed (-v shows it).
# The boot's environment, shared with test-upstream and test-debug's test_progs.
THUNK_BOOT := CPU=EPYC TCG_THREAD=single
TRAMP_TESTS := mitigations tramp_correct tramp_churn struct_ops
TRAMP_KERNEL := patched
test-tramp: $(B)/$(TRAMP_KERNEL)/initramfs.cpio
	$(call stage,trampoline and struct_ops tests on $(TRAMP_KERNEL) with retpolines and return thunks (EPYC$(,) single-threaded TCG))
	$(Q)$(THUNK_BOOT) $(call guest_run,$(TRAMP_KERNEL),tramp-$(TRAMP_KERNEL),spectre_v2=retpoline \
		$(call runner_cmd,$(TRAMP_TESTS),expect-thunks $(if $(filter patched,$(TRAMP_KERNEL)),expect-patched)))
	$(Q)guest/check-log.sh $(B)/logs/tramp-$(TRAMP_KERNEL).log runner \
		$(if $(filter patched,$(TRAMP_KERNEL)),$(call expect,tramp-patched))

# Upstream's test_progs on the patched kernel, as test-tramp boots it
# (retpolines and return thunks on, single-threaded TCG): every test and
# every subtest must pass (guest/upstream-compare.sh --one).
# UPSTREAM_KERNELS="base patched" boots base first, and then patched must
# pass every test, and at least the subtests, that base passes.
UPSTREAM_KERNELS := patched
test-upstream: $(foreach k,$(UPSTREAM_KERNELS),$(B)/$(k)/initramfs-upstream.cpio)
	$(Q)for k in $(UPSTREAM_KERNELS); do \
		printf '[%4ds] %s\n' $$(( $$(date +%s) - $(T0) )) "upstream test_progs ($(words $(UPSTREAM_TESTS)) tests) on $$k"; \
		$(THUNK_BOOT) guest/run-qemu.sh $(B)/$$k/bzImage $(B)/$$k/initramfs-upstream.cpio \
			$(B)/logs/upstream-$$k.log spectre_v2=retpoline $(upstream_cmd)$(if $(V:0=),$(,)-v); \
	done
	$(Q)guest/upstream-compare.sh $(if $(filter base,$(UPSTREAM_KERNELS)),$(B)/logs/upstream-base.log,--one) \
		$(B)/logs/upstream-patched.log $(UPSTREAM_TESTS) | tee $(B)/logs/upstream.log

# What a suite boot runs: the runner, its tests, BPF programs and modules.
SUITE_SRCS := $(sort $(wildcard selftests/*.[ch] selftests/prog_tests/*.c selftests/lib/*.[ch] \
	selftests/kmod/*.[ch] selftests/progs/*.c)) guest/log-patterns guest/log-allowed

# The guest suite on NUMA guests of 2 and 4 nodes sharing the same 2 GiB
# (guest/run-qemu.sh NUMA=N): a pack is 2 MiB a node, 4 and 8 MiB there.
# CI boots the debug kernel on 2 nodes (test-debug); the Debian-
# configuration record boots 4 (test-debian); this runs the patched kernel on
# both, in about 15 minutes.  Each boot must print what the one-node boot
# prints (guest/expect/guest-patched).
NUMA_NODES := 2 4
test-numa: $(B)/patched/initramfs.cpio
	$(Q)for n in $(NUMA_NODES); do \
		printf '[%4ds] %s\n' $$(( $$(date +%s) - $(T0) )) "guest suite on a $$n-node guest"; \
		NUMA=$$n $(call guest_run,patched,guest-numa$$n,$(call runner_cmd,,expect-patched)); \
		guest/check-log.sh $(B)/logs/guest-numa$$n.log runner $(call expect,guest-patched); \
	done
	$(Q)guest/summary.sh $(foreach n,$(NUMA_NODES),$(B)/logs/guest-numa$(n).log)

# 1 GiB direct-map pages: a 4 GiB guest (QEMU's -cpu max has them) with
# an exec pool of GBPAGES_POOL below 1 GiB (vmalloc_exec_pool=).  The
# gbpages test fills the pool and asserts no 1G split; the churn, whose
# packs fit in the pool, asserts the same.  A skip is a failure here.
# Then a kdump kernel (elfcorehdr=, here an address no RAM or device is at)
# given the same parameter, as kexec tools pass it on: it sets no pool aside.
GBPAGES_POOL := 16M
KDUMP_ELFCOREHDR := 0xc0000000
test-gbpages: $(B)/patched/initramfs.cpio
	$(call stage,1G direct-map pages: 4 GiB guest$(,) vmalloc_exec_pool=$(GBPAGES_POOL))
	$(Q)MEM=4G $(call guest_run,patched,guest-gbpages,vmalloc_exec_pool=$(GBPAGES_POOL) \
		$(call runner_cmd,gbpages exec_pool churn kernel_log/log,expect-patched))
	$(Q)guest/check-log.sh $(B)/logs/guest-gbpages.log runner $(call expect,guest-gbpages)
	$(call stage,a kdump kernel (elfcorehdr=$(KDUMP_ELFCOREHDR)) with vmalloc_exec_pool=$(GBPAGES_POOL))
	$(Q)$(call guest_run,patched,guest-kdump,elfcorehdr=$(KDUMP_ELFCOREHDR) \
		vmalloc_exec_pool=$(GBPAGES_POOL) $(call runner_cmd,exec_pool kernel_log/log,expect-patched))
	$(Q)guest/check-log.sh $(B)/logs/guest-kdump.log runner $(call expect,guest-kdump)

# debug_pagealloc=on: every free page unmapped from the direct map, mapped
# again as it is handed out, with only the local TLB flushed.  Those pages
# must not come back global, and nothing may collapse (debug_pagealloc);
# the JIT, module and kprobe pages and the W+X check must work there.
PAGEALLOC_TESTS := debug_pagealloc bpf_jit exec_pages no_wx kernel_log/log
test-pagealloc: $(B)/patched/initramfs.cpio
	$(call stage,debug_pagealloc=on ($(words $(PAGEALLOC_TESTS)) tests))
	$(Q)$(call guest_run,patched,guest-pagealloc,debug_pagealloc=on \
		$(call runner_cmd,$(PAGEALLOC_TESTS),expect-patched))
	$(Q)guest/check-log.sh $(B)/logs/guest-pagealloc.log runner $(call expect,guest-pagealloc)

# Memory that was hot-added, above a hole (memory_hotplug): two 512 MiB
# pc-dimms at 1 TiB, one aligned 1 GiB, that the guest adds through ACPI and
# onlines movable, and a 1 GiB virtio-mem device in the next 1 GiB; from
# 2 GiB to 1 TiB nothing is mapped, so one PGD entry of the direct map is
# empty.  The heal tests run there too, then a DIMM is ejected and half the
# virtio-mem device unplugged and plugged again (the guest asks; the
# launcher tells QEMU's monitor).  Twice: with 1 GiB direct-map pages
# (-cpu max), and without (nogbpages).
HOTPLUG_BOOT := CPU=max,phys-bits=46 DIMMS="0x10000000000:512M 0x10020000000:512M" \
	VMEM=0x10040000000:1G MAXMEM=1100G
# The heal tests, run on the hot-plug machine and on the large guest
heal_cmd = $(call runner_cmd,churn direct_map_heal memory_hotplug kernel_log/log,expect-patched)
hotplug_cmd = memhp_default_state=online_movable $(heal_cmd)
test-hotplug: $(B)/patched/initramfs.cpio
	$(call stage,hot-added memory above a hole: two 512 MiB DIMMs and 1 GiB of virtio-mem at 1 TiB)
	$(Q)$(HOTPLUG_BOOT) $(call guest_run,patched,guest-hotplug,$(hotplug_cmd))
	$(Q)guest/check-log.sh $(B)/logs/guest-hotplug.log runner $(call expect,guest-hotplug)
	$(call stage,the same without 1 GiB direct-map pages (nogbpages))
	$(Q)$(HOTPLUG_BOOT) $(call guest_run,patched,guest-hotplug-nogb,nogbpages $(hotplug_cmd))
	$(Q)guest/check-log.sh $(B)/logs/guest-hotplug-nogb.log runner $(call expect,guest-hotplug)
	$(call stage,a large guest: $(LARGE_TEST_MEM) without 1 GiB direct-map pages (nogbpages))
	$(Q)MEM=$(LARGE_TEST_MEM) $(call guest_run,patched,guest-large,nogbpages $(heal_cmd))
	$(Q)guest/check-log.sh $(B)/logs/guest-large.log runner $(call expect,guest-large)

# The collapse's cost on a large guest (memory_hotplug/span_cost): 64 GiB
# without 1G direct-map pages (nogbpages), where a walk of the span between
# two pages would read every PMD entry between them.  A time, noted, not
# asserted: not part of make test.  make test-hotplug boots LARGE_TEST_MEM
# the same way, with the heal tests, and asserts that both pages' 2M
# entries come back (its time is noted too).
LARGE_MEM := 64G
LARGE_TEST_MEM := 16G
# guest/lock-hold runs the test and times the collapse's hold of cpa_lock
# and pgd_lock with the function graph tracer; it rides in a second cpio.
measure-collapse: $(B)/patched/initramfs-lockhold.cpio
	$(call stage,the collapse's cost: $(LARGE_MEM) guest$(,) nogbpages)
	$(Q)MEM=$(LARGE_MEM) guest/run-qemu.sh $(B)/patched/bzImage $< $(B)/logs/collapse-cost.log \
		nogbpages guest_cmd=lock-hold,-t,memory_hotplug,-a,expect-patched
	$(Q)guest/check-log.sh $(B)/logs/collapse-cost.log runner
	$(Q)grep -h 'memory_hotplug/span_cost\|^lock-hold:' $(B)/logs/collapse-cost.log

$(B)/%/initramfs-lockhold.cpio: $(B)/%/initramfs.cpio guest/lock-hold
	$(Q)echo 'file /selftests/lock-hold $(CURDIR)/guest/lock-hold 755 0 0' | \
		$(B)/$*/linux/usr/gen_init_cpio - | cat $< - > $@

# direct_map_heal on the unpatched kernel, verbose, for its numbers: nothing
# heals there, and the test only notes what the same workloads leave split.
test-heal-base: $(B)/base/initramfs.cpio
	$(call stage,direct_map_heal on base: what the workloads leave split without patch 21)
	$(Q)$(call guest_run,base,heal-base,guest_cmd=runner$(,)-t$(,)direct_map_heal$(,)-v)
	$(Q)guest/check-log.sh $(B)/logs/heal-base.log runner

test-exec-base: $(B)/base/initramfs.cpio
	$(call stage,exec_pages on base: what modules$(,) kprobes and ftrace split without patch 22)
	$(Q)$(call guest_run,base,exec-base,guest_cmd=runner$(,)-t$(,)exec_pages$(,)-v)
	$(Q)guest/check-log.sh $(B)/logs/exec-base.log runner

# Hibernation for real, HIBERNATE_CYCLES times in a row: the runner's
# hibernation test writes an image to a swap disk and powers off, the next
# boot resumes it, and the test goes on (guest/hibernate.sh).
# HIBERNATE_KERNEL=base runs it on the unpatched kernel.
HIBERNATE_CYCLES := 3
HIBERNATE_KERNEL := patched
test-hibernate: $(B)/$(HIBERNATE_KERNEL)/initramfs.cpio
	$(call stage,hibernation on $(HIBERNATE_KERNEL): $(HIBERNATE_CYCLES) cycles$(,) a boot each (guest/hibernate.sh))
	$(Q)DISK=$(B)/$(HIBERNATE_KERNEL)/swap.img guest/hibernate.sh $(B)/$(HIBERNATE_KERNEL)/bzImage $< \
		$(B)/logs/hibernate-$(HIBERNATE_KERNEL).log $(HIBERNATE_CYCLES) \
		$(if $(filter patched,$(HIBERNATE_KERNEL)),-a expect-patched) $(RUNNER_ARGS)
	$(Q)guest/check-log.sh $(B)/logs/hibernate-$(HIBERNATE_KERNEL).log runner \
		$(if $(filter patched,$(HIBERNATE_KERNEL)),$(call expect,hibernate-patched))

# The harness must call a broken test, a kernel panic, a hung guest, a
# WARN and an oops in a kworker, a hung task, a kernel log whose ring lost
# records, and a hibernation image lost before the resume failures.  In
# the kernel's own failures (guest/harness) the guest ends normally, rc 0:
# only the log judge can see them.
test-harness: $(B)/patched/initramfs.cpio
	$(call stage,harness self-test: a broken test$(,) a panic$(,) a hang$(,) a WARN$(,) an oops$(,) a hung task$(,) lost log records and a lost image must fail)
	$(Q)$(call guest_run,patched,harness-broken,guest_cmd=runner$(,)-t$(,)kunit_vmalloc_huge$(,)-a$(,)expect-nohuge)
	$(Q)$(call guest_run,patched,harness-panic,crash_test)
	$(Q)GUEST_TIMEOUT=10 $(call guest_run,patched,harness-hang,guest_cmd=../bin/cat)
	$(Q)for w in warn oops hungtask; do $(call guest_run,patched,harness-$$w,guest_cmd=harness$(,)$$w); done
	$(Q)LOG_BUF_LEN= $(call guest_run,patched,harness-flood,printk.devkmsg=on guest_cmd=harness$(,)flood)
	$(Q)DISK=$(B)/patched/swap.img HIBERNATE_LOSE_IMAGE=1 guest/hibernate.sh $(B)/patched/bzImage $< \
		$(B)/logs/harness-hibernate.log 1 > $(B)/logs/harness-hibernate.out || true
	$(Q){ guest/expect-fail.sh broken_test_fails $(B)/logs/harness-broken.log runner \
		'failed: .*kunit_vmalloc_huge/vmalloc_huge_pmd_mapped: FAIL'; \
	  guest/expect-fail.sh panic_fails $(B)/logs/harness-panic.log runner \
		'no end marker: .*Kernel panic'; \
	  guest/expect-fail.sh hang_times_out $(B)/logs/harness-hang.log runner \
		'no end marker: launcher: timeout'; \
	  guest/expect-fail.sh warn_in_kworker_fails $(B)/logs/harness-warn.log command \
		'WARNING: CPU: .* harness_warn'; \
	  guest/expect-fail.sh oops_in_kworker_fails $(B)/logs/harness-oops.log command \
		'BUG: kernel NULL pointer dereference'; \
	  guest/expect-fail.sh hung_task_fails $(B)/logs/harness-hungtask.log command \
		'INFO: task harness_hang:[0-9]+ blocked for more than'; \
	  guest/expect-fail.sh lost_records_fail $(B)/logs/harness-flood.log runner \
		'kernel log lost records'; \
	  guest/expect-fail.sh lost_image_fails $(B)/logs/harness-hibernate.out output \
		'boot 2 did not resume .*no hibernation image on /dev/vda'; \
	  guest/test-stamp.sh -q; } | tee $(B)/logs/harness.log
	$(Q)! grep -q '^#- [^ ]*: FAIL' $(B)/logs/harness.log

# The same suite on the debug kernel: KASAN, lockdep, DEBUG_VM, kmemleak,
# on a 2-node NUMA guest (4 MiB packs of 2 PMDs), then upstream's
# test_progs on it, every test to pass.
# It takes about 45 minutes here with its build, too long for every CI run,
# so a pass is recorded in guest/debug-tested against a hash of what it
# tested, which CI checks (check-debug-record) but does not rerun: the hash
# changes with the series, the kernel configs or a test.
# What both records cover (guest/stamp.sh describes the items; it adds the
# kernel source): the series, the guest's files and tests, their judges, and
# the tools that build and boot them.
GUEST_SUITE_INPUTS := patches/series $(PATCHES) guest/apply-series.sh guest/check-config.sh \
	guest/run-qemu.sh guest/initramfs.list $(addprefix guest/,$(shell sed -n \
	's|^file [^ ]* $${GUEST}/\([^ ]*\) .*|\1|p' guest/initramfs.list)) guest/check-log.sh \
	$(wildcard guest/expect/*) selftests/Makefile selftests/kmod/Kbuild $(SUITE_SRCS) \
	rule:$(B)/%/initramfs.cpio 'guest_run=$(call guest_run,K,L,A)' \
	tool:gcc tool:clang tool:bpftool tool:qemu-system-x86_64 pkg:libbpf-dev pkg:busybox-static
DEBUG_INPUTS := $(GUEST_SUITE_INPUTS) guest/config.fragment guest/debug.fragment \
	guest/upstream-compare.sh guest/summary.sh selftests/upstream/Makefile selftests/upstream/tests \
	rule:test-debug rule:$(B)/%/linux/.config 'fragments_debug=$(call fragments,debug)' \
	'runner_cmd=$(call runner_cmd,,expect-patched)' 'expect=$(call expect,guest-debug)' \
	'HOTPLUG_BOOT=$(HOTPLUG_BOOT)' \
	'THUNK_BOOT=$(THUNK_BOOT)' 'UPSTREAM_DENY=$(UPSTREAM_DENY)' 'upstream_cmd=$(upstream_cmd)'

test-debug: $(B)/debug/initramfs-upstream.cpio
	$(Q)$(call stamp,begin,$@) guest/debug-tested $(DEBUG_INPUTS)
	$(call stage,guest suite on the debug kernel (guest/debug.fragment)$(,) 2 nodes)
	$(Q)NUMA=2 GUEST_TIMEOUT=$(DEBUG_TIMEOUT) $(call guest_run,debug,guest-debug,$(call runner_cmd,,expect-patched))
	$(Q)guest/check-log.sh $(B)/logs/guest-debug.log runner $(call expect,guest-debug)
	$(call stage,hot-added memory above a hole on the debug kernel (make test-hotplug's machine))
	$(Q)$(HOTPLUG_BOOT) GUEST_TIMEOUT=$(DEBUG_TIMEOUT) $(call guest_run,debug,hotplug-debug,memhp_default_state=online_movable \
		$(call runner_cmd,direct_map_heal memory_hotplug kernel_log/log,expect-patched))
	$(Q)guest/check-log.sh $(B)/logs/hotplug-debug.log runner $(call expect,hotplug-debug)
	$(call stage,upstream test_progs on the debug kernel)
	$(Q)$(THUNK_BOOT) GUEST_TIMEOUT=$(DEBUG_UPSTREAM_TIMEOUT) guest/run-qemu.sh $(B)/debug/bzImage \
		$< $(B)/logs/upstream-debug-run.log spectre_v2=retpoline $(upstream_cmd)
	$(Q)guest/upstream-compare.sh --one $(B)/logs/upstream-debug-run.log $(UPSTREAM_TESTS) | \
		tee $(B)/logs/upstream-debug.log
	$(Q)guest/summary.sh $(B)/logs/guest-debug.log $(B)/logs/hotplug-debug.log $(B)/logs/upstream-debug.log | \
		tee $(B)/logs/debug-summary.log
	$(Q)$(if $(RUNNER_ARGS),:,{ cat $(B)/logs/guest-debug.log; grep '^launcher:' $(B)/logs/upstream-debug-run.log; \
		cat $(B)/logs/hotplug-debug.log $(B)/logs/upstream-debug.log $(B)/logs/debug-summary.log; } \
		> $(B)/logs/debug-all.log && \
		$(call stamp,write,$@) guest/debug-tested $(B)/logs/debug-all.log $(DEBUG_INPUTS))

test-debug-if-changed:
	$(Q)$(call run_if_changed,guest/debug-tested,$(DEBUG_INPUTS),test-debug)

# The guest suite on the series built with Debian's configuration (see
# $(B)/debian/linux/.config above), booted as users run it: default command
# line, an AMD Zen guest (EPYC) so that the mitigations Debian builds in are
# on (retpolines, return thunks, SRSO; the mitigations test asserts them:
# expect-thunks), and 4 NUMA nodes, so that packs are 8 MiB.  Its churn
# test asserts what the churn demo would show (no split, DirectMap4k and
# ptdump's 4K entries no higher).  Debian does not force the JIT on
# (BPF_JIT_ALWAYS_ON), so bpf_jit then expects a JIT it can turn off.  A
# 14-minute build and an 11-minute run: recorded in guest/debian-tested,
# which CI checks (check-debian-record) but does not rerun.
DEBIAN_BOOT := CPU=EPYC NUMA=4 GUEST_TIMEOUT=$(DEBIAN_TIMEOUT)
DEBIAN_INPUTS := $(GUEST_SUITE_INPUTS) $(DEBIAN_CONFIG) guest/churn-table.sh distro-image \
	rule:test-debian rule:$(B)/debian/linux/.config 'DEBIAN_BOOT=$(DEBIAN_BOOT)' \
	'runner_cmd=$(call runner_cmd,,expect-patched expect-thunks)' 'expect=$(call expect,guest-debian)'
test-debian: $(B)/debian/initramfs.cpio
	$(Q)$(call stamp,begin,$@) guest/debian-tested $(DEBIAN_INPUTS)
	$(call stage,guest suite on the Debian-configuration kernel (EPYC$(,) 4 nodes))
	$(Q)$(DEBIAN_BOOT) $(call guest_run,debian,guest-debian,$(call runner_cmd,,expect-patched expect-thunks \
		$(shell grep -qx CONFIG_BPF_JIT_ALWAYS_ON=y $(B)/debian/linux/.config || echo jit-optional)))
	$(Q)guest/check-log.sh $(B)/logs/guest-debian.log runner $(call expect,guest-debian)
	$(Q)$(if $(RUNNER_ARGS),:,{ grep -E '^(  CONFIG|hardening:)' $(B)/logs/config-debian.log | \
		sed 's/^ */### /'; cat $(B)/logs/guest-debian.log; } > $(B)/logs/debian-all.log && \
		$(call stamp,write,$@) guest/debian-tested $(B)/logs/debian-all.log $(DEBIAN_INPUTS))

test-debian-if-changed:
	$(Q)$(call run_if_changed,guest/debian-tested,$(DEBIAN_INPUTS),test-debian)

# CI's check of a record it does not rerun.  Beside make test (33 minutes
# from a clean clone at patch 25) the recorded suites cannot all rerun in
# CI's 70 minutes: the debug suite (a 16-minute build and 30 minutes of
# boots) alone would take it to 79, and a change to the series or a test
# stales the Debian suite's record too (a 14-minute build and a 13-minute
# run); the cross-build takes 47 minutes, the real system 42 for its package
# and two boots.  It fails at once, naming the command that makes the
# record, when the record is not of these inputs.
check_record = $(MAKE) -s $(B)/source-version && { $(call stamp,check,$(3)) $(1) $(2) || \
	{ echo "$(notdir $(1)): not current (above): run make $(3), one suite at a time on a quiet host, and commit $(1)"; exit 1; }; }
check-debug-record:
	$(Q)$(call check_record,guest/debug-tested,$(DEBUG_INPUTS),test-debug)

check-debian-record:
	$(Q)$(call check_record,guest/debian-tested,$(DEBIAN_INPUTS),test-debian)

check-system-record:
	$(Q)$(call check_record,guest/system-tested,$(SYSTEM_INPUTS),test-system)

# The cross compilers are inputs of the record: they are installed to be compared.
check-cross-record: | deps-cross
	$(Q)$(call check_record,guest/cross-tested,$(CROSS_INPUTS),check-cross)

test: test-host test-pack test-guest test-nohuge test-tramp test-gbpages test-pagealloc \
	test-hotplug test-upstream test-hibernate test-harness
	$(call stage,results)
	$(Q)guest/summary.sh $(B)/logs/host.log $(B)/logs/pack.log $(B)/logs/guest-patched.log \
		$(B)/logs/guest-nohuge.log $(B)/logs/tramp-patched.log $(B)/logs/guest-gbpages.log \
		$(B)/logs/guest-kdump.log $(B)/logs/guest-pagealloc.log $(B)/logs/guest-hotplug.log $(B)/logs/guest-hotplug-nogb.log \
		$(B)/logs/guest-large.log $(B)/logs/upstream.log \
		$(B)/logs/hibernate-patched.log $(B)/logs/harness.log

# The bench (bench/): the three kernels booted in turn on one initramfs, a report and plots.
bench: $(B)/base/bzImage $(B)/patched/bzImage | deps
	$(Q)$(MAKE) -s -C bench

clean:
	rm -rf $(B)
