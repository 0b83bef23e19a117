#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the guests' "B ..." lines (build/bench/log-KERNEL.log) into
build/bench/report.md, the raw series as CSV and the gnuplot scripts.
More boots of a kernel (log-KERNEL.N.log, QEMU seed N) add their load
costs: the timing targets compare base and patched over every boot, and
at the scale marks load by load between the boots of the same seed.

   report.py OUTDIR KERNEL...
"""
import datetime
import glob
import os
import platform
import re
import statistics
import subprocess
import sys

MIB2 = 2 << 20
MARKS = [1000, 10000, 50000, 100000]
ALLOC_FN = "bpf_jit_binary_pack_alloc"	# the pack allocator, bpf_prog_pack_alloc() inside it
PROF_ROWS = ["__sys_bpf", "bpf_check", "bpf_prog_calc_tag", "bpf_prog_alloc",
             "bpf_int_jit_compile", ALLOC_FN, "bpf_prog_pack_alloc",
             "bpf_jit_binary_pack_finalize", "bpf_prog_alloc_id", "bpf_prog_kallsyms_add",
             "bpf_prog_new_fd", "__vmalloc_node_range", "alloc_vmap_area"]


def kv(words):
    d = {}
    for w in words:
        if "=" in w:
            k, v = w.split("=", 1)
            try:
                d[k] = float(v) if "." in v else int(v)
            except ValueError:
                d[k] = v
    return d


def parse(path):
    r = {"snap": {}, "churn": {}, "lat": {}, "random": [], "mixed": [], "scale": [], "mark": {},
         "tramp": {}, "frag": {},
         "marklat": {}, "prof": {}, "done": None, "errors": [], "profiler": None, "launcher": ""}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("launcher: "):
                r["launcher"] = line[len("launcher: "):].strip()
            if not line.startswith("B "):
                continue
            w = line.split()
            kind, d = w[1], kv(w[2:])
            if kind == "snap":
                r["snap"][(d["wl"], d["tag"])] = d
            elif kind == "churn":
                r["churn"][d["round"]] = d
            elif kind == "lat":
                r["lat"][d["wl"]] = d
            elif kind in RANDOM_WLS:
                r[kind].append(d)
            elif kind == "scale":
                r["scale"].append(d)
            elif kind == "mark":
                r["mark"][d["live"]] = d
            elif kind == "marklat":
                r["marklat"][d["live"]] = [float(x) for x in str(d["us"]).split(",")]
            elif kind == "prof":
                # one entry per function: the window with its least time per call
                fns = r["prof"].setdefault(d["mark"], {})
                o = fns.get(d["fn"])
                if d["hits"] and (not o or d["us"] / d["hits"] < o["us"] / o["hits"]):
                    fns[d["fn"]] = d
            elif kind == "tramp":
                r["tramp"] = d
            elif kind == "frag":
                r["frag"][d["wl"]] = d
            elif kind == "profiler":
                r["profiler"] = d
            elif kind == "done":
                r["done"] = d
            elif kind == "error":
                r["errors"].append(line.strip())
    # The Modules area holds only BPF text in the bench guest (no module is
    # loaded), but for ftrace's trampoline, made before the first workload
    # (benchtool's prof_warm()): the 4K entries there then, with no program
    # live, are not BPF text, and a random churn sample counts beyond them.
    start = r["snap"].get(("boot", "start"), {})
    for wl in RANDOM_WLS:
        for d in r[wl]:
            if d.get("mod4k", -1) >= 0 and start.get("mod4k", -1) >= 0:
                d["mod4k"] -= start["mod4k"]
    return r


# the random churn workloads: benchtool -w r (2-400 insns) and -w m (1 in 8 larger)
RANDOM_WLS = ("random", "mixed")


def na(v, fmt="{:,}"):
    if v is None or (isinstance(v, (int, float)) and v < 0):
        return "n/a"
    return fmt.format(v)


def ratio(p, b):
    if p is None or b is None or p < 0 or b < 0:
        return "n/a"
    if b == 0:
        return "=" if p == 0 else "∞"
    return f"{p / b:.2f}x"


def delta(r, wl, tag, key, base="before"):
    a, b = r["snap"].get((wl, base)), r["snap"].get((wl, tag))
    if not a or not b or a.get(key, -1) < 0 or b.get(key, -1) < 0:
        return None
    return b[key] - a[key]


def splits(r, wl, tag):
    a, b = delta(r, wl, tag, "l2"), delta(r, wl, tag, "l3")
    return None if a is None else a + (b or 0)


def snapval(r, wl, tag, key):
    s = r["snap"].get((wl, tag))
    return None if not s or s.get(key, -1) < 0 else s[key]


WORKLOADS = ["churn", "random", "mixed", "scale", "tramp", "frag", "fragc"]


def snap_diff(r, a, b, fn):
    """fn(snapshot b) less fn(snapshot a), snapshots named (workload, tag); None without either."""
    sa, sb = r["snap"].get(a), r["snap"].get(b)
    if not sa or not sb:
        return None
    va, vb = fn(sa), fn(sb)
    return None if va is None or vb is None else vb - va


def vs_boot(r, wl, fn):
    """fn(snapshot) at the end of workload wl, less the same before the first one."""
    return snap_diff(r, ("boot", "start"), (wl, "end"), fn)


def profiler_cost(r, fn):
    """fn(snapshot) before the first workload, less the same just after boot: the
    profiler's trampoline, made in between."""
    return snap_diff(r, ("boot", "booted"), ("boot", "start"), fn)


def dm4k(s):
    return s["dm4k"] if s.get("dm4k", -1) >= 0 else None


def live_splits(s):
    """Split entries still split: splits less collapses (a kernel without collapses: splits)."""
    return s["l2"] + s["l3"] - max(s.get("c2", -1), 0) - max(s.get("c3", -1), 0)


def text_entries(s):
    if not s or s.get("mod4k", -1) < 0:
        return None
    return s["mod4k"] + s["mod2m"]


def prof_us(r, mark, fn):
    p = r["prof"].get(mark, {}).get(fn)
    return p["us"] / p["hits"] if p and p["hits"] else None


def main():
    out, kernels = sys.argv[1], sys.argv[2:]
    R = {k: parse(f"{out}/log-{k}.log") for k in kernels}
    # boot N of a kernel ran with QEMU seed N
    seed = lambda f: int(re.search(r"\.(\d+)\.log$", f).group(1))
    boots = {k: [R[k]] + [parse(f) for f in sorted(glob.glob(f"{out}/log-{k}.[0-9]*.log"), key=seed)]
             for k in kernels}
    has = lambda k: k in R
    cols = kernels + (["patched/base"] if has("base") and has("patched") else [])
    md = []
    P = md.append

    def table(title, rows, note=None):
        P(f"\n### {title}\n")
        if note:
            P(note + "\n")
        P("| metric | " + " | ".join(cols) + " |")
        P("| --- |" + " ---: |" * len(cols))
        for name, fn, fmt in rows:
            vals = {k: fn(R[k]) for k in kernels}
            cells = [na(vals[k], fmt) for k in kernels]
            if "patched/base" in cols:
                cells.append(ratio(vals["patched"], vals["base"]))
            P(f"| {name} | " + " | ".join(cells) + " |")

    # --- header ---
    srcver = open("build/source-version").read().strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), platform.machine())
    qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True,
                          text=True).stdout.splitlines()[0]
    cfg = next((l for l in open(f"{out}/log-{kernels[0]}.log") if l.startswith("B config")), "")
    P("# make bench")
    P("")
    P(f"- date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC")
    P(f"- source: {srcver}")
    P(f"- machine: {cpu}, {os.cpu_count()} cores; guest: {qemu}, "
      f"{R[kernels[0]]['launcher'] or '?'} (the first boot's launcher line), -cpu max")
    P("- time: every guest runs under QEMU's icount (`CLOCK=icount` in guest/run-qemu.sh): its "
      "clock counts the instructions it runs, 1 ns each, and skips idle time, so a time below "
      "is in microseconds of that clock, 1 us = 1,000 guest instructions, whatever the host did "
      "meanwhile. Boot N of a kernel runs with QEMU seed N; two runs of the whole bench "
      "differed by at most 1% in a p50.")
    for k in kernels:
        img = open(f"{out}/image-{k}").read().strip() if os.path.exists(f"{out}/image-{k}") else "?"
        el = R[k]["done"]["elapsed_s"] if R[k]["done"] else "?"
        P(f"- {k}: `{img}`, {el} s in the guest")
    P(f"- workloads: `benchtool {cfg.split(' ', 2)[2].strip() if cfg else '?'}` "
      "(churn: n programs of 2-400 insns x rounds; random: seeded loads/frees around a live "
      "target, 2-400 insns; mixed: the same with 1 program in 8 of 400-2400 insns; "
      "scale: 2-60 insn programs up to the target; tramp: fentry attach/detach on syscall entry "
      "points, rounds as churn's)")
    P("- n/a: the kernel cannot give it (the distro kernel has no PTDUMP_DEBUGFS and no "
      "FUNCTION_PROFILER). Packs: `/sys/kernel/debug/bpf/prog_pack` on patched, 2 MiB "
      "`module_alloc` areas in `/proc/vmallocinfo` on base and distro.")
    for k in kernels:
        for e in R[k]["errors"]:
            P(f"- **{k}: {e}**")

    # --- churn ---
    last = max((r for r in R[kernels[0]]["churn"]), default=0)
    table(f"churn ({last} rounds; counters before the first round and after the last)", [
        ("direct-map splits (l2+l3)", lambda r: splits(r, "churn", f"round{last}"), "{:+,}"),
        ("DirectMap4k delta, kB", lambda r: delta(r, "churn", f"round{last}", "dm4k"), "{:+,}"),
        ("ptdump direct-map 4K entries, delta", lambda r: delta(r, "churn", f"round{last}", "dmap4k"), "{:+,}"),
        ("ptdump direct-map 4K entries, after", lambda r: snapval(r, "churn", f"round{last}", "dmap4k"), "{:,}"),
        ("us per load, p50", lambda r: r["lat"].get("churn", {}).get("p50"), "{:.0f}"),
        ("us per load, p99", lambda r: r["lat"].get("churn", {}).get("p99"), "{:.0f}"),
    ])

    # --- random ---
    def rmean(key, wl="random"):
        def f(r):
            v = [s[key] for s in r[wl] if s.get(key, -1) >= 0]
            return sum(v) / len(v) if v else None
        return f

    def rfun(fn, wl="random"):
        def f(r):
            v = [fn(s) for s in r[wl]]
            v = [x for x in v if x is not None]
            return sum(v) / len(v) if v else None
        return f
    occ = lambda s: 100.0 * s["jit_bytes"] / s["pack_bytes"] if s["pack_bytes"] > 0 else None
    ent = lambda s: s["mod4k"] + s["mod2m"] if s.get("mod4k", -1) >= 0 else None
    # no allocator can hold fewer packs than this (chunk rounding only adds)
    floor = lambda s: -(-s["jit_bytes"] // MIB2)
    tgt = next((d.get("live") for d in [kv(cfg.split())] if cfg), "?")

    def random_rows(wl):
        return [
            ("packs held before the workload (idle)", lambda r: snapval(r, wl, "before", "packs"), "{:,}"),
            ("packs held, mean", rmean("packs", wl), "{:.2f}"),
            ("packs held, max", lambda r: max((s["packs"] for s in r[wl]), default=None), "{:,}"),
            ("least packs that hold the live JIT bytes (ceil(bytes / 2 MiB)), mean", rfun(floor, wl), "{:.2f}"),
            ("packs held above that least number, mean", rfun(lambda s: s["packs"] - floor(s) if s["packs"] >= 0 else None, wl), "{:.2f}"),
            ("live JIT bytes, mean", rmean("jit_bytes", wl), "{:,.0f}"),
            ("occupancy (live JIT bytes / pack bytes), %", rfun(occ, wl), "{:.1f}"),
            ("stranded bytes (pack bytes - live JIT bytes), mean", rfun(lambda s: s["pack_bytes"] - s["jit_bytes"] if s["pack_bytes"] >= 0 else None, wl), "{:,.0f}"),
            ("executable bytes per program (pack bytes / live)", rfun(lambda s: s["pack_bytes"] / s["live"] if s["pack_bytes"] >= 0 and s["live"] else None, wl), "{:,.0f}"),
            ("JIT bytes per program", rfun(lambda s: s["jit_bytes"] / s["live"] if s["live"] else None, wl), "{:,.0f}"),
            ("BPF text PTEs (4K), mean", rmean("mod4k", wl), "{:.1f}"),
            ("BPF text PMDs (2M), mean", rmean("mod2m", wl), "{:.1f}"),
            ("BPF text entries per 2 MiB of packs", rfun(lambda s: ent(s) / (s["pack_bytes"] / MIB2) if ent(s) is not None and s["pack_bytes"] > 0 else None, wl), "{:.2f}"),
            ("direct-map splits, peak", lambda r: splits(r, wl, "peak"), "{:+,}"),
            ("DirectMap4k delta at peak, kB", lambda r: delta(r, wl, "peak", "dm4k"), "{:+,}"),
            ("direct-map splits, after freeing all", lambda r: splits(r, wl, "after"), "{:+,}"),
            ("DirectMap4k delta after freeing all, kB", lambda r: delta(r, wl, "after", "dm4k"), "{:+,}"),
            ("us per load, p50", lambda r: r["lat"].get(wl, {}).get("p50"), "{:.0f}"),
            ("us per load, p99", lambda r: r["lat"].get(wl, {}).get("p99"), "{:.0f}"),
        ]

    sizes = {"random": "2-400 insns", "mixed": "1 program in 8 of 400-2400 insns, the rest 2-400"}
    for wl in RANDOM_WLS:
        if not any(R[k][wl] for k in kernels):
            continue
        n = len(R[kernels[0]][wl])
        table(f"random churn, {sizes[wl]} (live target {tgt:,}; means over {n} samples)"
              if isinstance(tgt, int) else f"random churn, {sizes[wl]}", random_rows(wl))

    # --- scale ---
    marks = sorted(set(m for k in kernels for m in R[k]["mark"]))
    rows = []
    for m in marks:
        rows.append((f"us per load at {m:,} live, p50", lambda r, m=m: r["mark"].get(m, {}).get("p50"), "{:.0f}"))
        rows.append((f"us per load at {m:,} live, p99", lambda r, m=m: r["mark"].get(m, {}).get("p99"), "{:.0f}"))
    if marks:
        m0, m1 = marks[0], marks[-1]

        def growth(r):
            a, b = r["mark"].get(m0, {}).get("p50"), r["mark"].get(m1, {}).get("p50")
            return b / a if a and b else None
        rows.append((f"growth of p50, {m0:,} -> {m1:,} live (x)", growth, "{:.2f}"))
    peak_live = lambda r: snapval(r, "scale", "peak", "live")
    rows += [
        ("live programs at peak", peak_live, "{:,}"),
        ("packs held at peak", lambda r: snapval(r, "scale", "peak", "packs"), "{:,}"),
        ("executable bytes per program at peak (pack bytes / live)",
         lambda r: snapval(r, "scale", "peak", "pack_bytes") / peak_live(r) if snapval(r, "scale", "peak", "pack_bytes") is not None and peak_live(r) else None, "{:,.0f}"),
        ("BPF text PTEs (4K) at peak, beyond before", lambda r: delta(r, "scale", "peak", "mod4k"), "{:,}"),
        ("BPF text PMDs (2M) at peak, beyond before", lambda r: delta(r, "scale", "peak", "mod2m"), "{:,}"),
        ("direct-map splits at peak", lambda r: splits(r, "scale", "peak"), "{:+,}"),
        ("DirectMap4k delta at peak, kB", lambda r: delta(r, "scale", "peak", "dm4k"), "{:+,}"),
        ("ptdump direct-map 4K entries delta at peak", lambda r: delta(r, "scale", "peak", "dmap4k"), "{:+,}"),
        ("direct-map splits after freeing all", lambda r: splits(r, "scale", "after"), "{:+,}"),
        ("DirectMap4k delta after freeing all, kB", lambda r: delta(r, "scale", "after", "dm4k"), "{:+,}"),
    ]
    table("scale (p50/p99 over the 500 loads before each mark, profiler off)", rows,
          "Before the first workload the profiler is switched on and off once: its first use "
          "allocates ftrace's trampoline, one 4K page in the Modules area that ftrace keeps while "
          "the kernel runs, and splits the direct map itself (see the direct map once each "
          "workload is freed).")

    # --- profile ---
    P("\n### where a load's time goes as live programs grow (ftrace function profiler)\n")
    pw = next((R[k]["profiler"] for k in kernels if (R[k]["profiler"] or {}).get("available")), {})
    P("us per call, including children (graph-time) but not time scheduled out (sleep-time off): "
      f"at each mark, {pw.get('windows', 1)} windows of {pw.get('loads', '?')} loads, each "
      "starting from the mark's live count, and for "
      "each function the window with the least time per call (interference only adds). "
      "`bpf_prog_pack_alloc` is the pack allocator proper; the JIT reaches it through "
      f"`{ALLOC_FN}`, which also kvmalloc()s the writable copy; share = time / `__sys_bpf` "
      "time. Functions the kernel inlines or cannot trace are missing. "
      "The profiler adds its own overhead, so these totals are larger than the p50 above.\n")
    for k in kernels:
        if not R[k]["prof"]:
            P(f"- {k}: n/a (no function profiler in this kernel)")
    pk = [k for k in kernels if R[k]["prof"]]
    if pk:
        P("")
        P("| function | " + " | ".join(f"{k} {m // 1000}k" for k in pk for m in marks) + " |")
        P("| --- |" + " ---: |" * (len(pk) * len(marks)))
        for fn in PROF_ROWS:
            cells = [na(prof_us(R[k], m, fn), "{:.1f}") for k in pk for m in marks]
            if all(c == "n/a" for c in cells):
                continue
            P(f"| `{fn}` | " + " | ".join(cells) + " |")
        for fn in ["bpf_prog_pack_alloc", ALLOC_FN]:
            cells = []
            for k in pk:
                for m in marks:
                    a, t = prof_us(R[k], m, fn), prof_us(R[k], m, "__sys_bpf")
                    cells.append(f"{100 * a / t:.1f}%" if a is not None and t else "n/a")
            P(f"| **share of `{fn}`** | " + " | ".join(cells) + " |")
        P("")
        for k in pk:
            if marks:
                t0, t1 = prof_us(R[k], marks[0], "__sys_bpf"), prof_us(R[k], marks[-1], "__sys_bpf")
                if t0 and t1:
                    parts = []
                    for fn in ["bpf_check", "bpf_prog_alloc", "bpf_int_jit_compile",
                               "bpf_prog_pack_alloc", "bpf_jit_binary_pack_finalize",
                               "bpf_prog_calc_tag", ALLOC_FN,
                               "bpf_prog_alloc_id", "bpf_prog_kallsyms_add", "bpf_prog_new_fd"]:
                        a, b = prof_us(R[k], marks[0], fn), prof_us(R[k], marks[-1], fn)
                        if a is not None and b is not None:
                            parts.append((b - a, fn))
                    parts.sort(reverse=True)
                    s = ", ".join(f"`{fn}` {d:+.0f} us ({100 * d / (t1 - t0):.0f}% of the growth)"
                                  if t1 > t0 else f"`{fn}` {d:+.0f} us" for d, fn in parts[:4])
                    P(f"- {k}: a load costs {t0:.0f} us at {marks[0]:,} live and {t1:.0f} us at "
                      f"{marks[-1]:,} ({t1 - t0:+.0f} us); the largest changes: {s} "
                      "(nested: `bpf_int_jit_compile` includes the allocator and finalize, so "
                      "shares overlap).")

    # --- load cost over every boot ---
    timings = [("churn", lambda r: r["lat"].get("churn", {}).get("p50")),
               ("random", lambda r: r["lat"].get("random", {}).get("p50"))]
    timings += [(f"scale, {m:,} live", lambda r, m=m: r["mark"].get(m, {}).get("p50")) for m in marks]

    tk = [k for k in ["base", "patched"] if has(k)]
    # workload -> kernel -> its p50 on every boot (empty if a boot lacks it)
    lc = {name: {k: v if all(v := [fn(r) for r in boots[k]]) else [] for k in tk}
          for name, fn in timings}
    mean = lambda v: sum(v) / len(v)

    # The loads before a scale mark are the same programs, in the same order, on
    # both kernels: patched - base load by load, over the boots of the same seed.
    def paired(m):
        d = []
        if len(tk) == 2:
            for pb, bb in zip(boots["patched"], boots["base"]):
                a, b = pb["marklat"].get(m), bb["marklat"].get(m)
                if a and b and len(a) == len(b):
                    d += [x - y for x, y in zip(a, b)]
        return d
    pairs = {f"scale, {m:,} live": paired(m) for m in marks}

    def by_load(name):
        d = pairs.get(name)
        if not d:
            return None
        return (f"{statistics.median(d):+.2f} us, cheaper in {sum(x < 0 for x in d):,} "
                f"of {len(d):,}")

    if tk:
        P("\n### load cost, p50 in us, over every boot of base and patched\n")
        P("The same workloads on each boot; boot N of a kernel runs with QEMU seed N, which "
          "fixes the random numbers the guest gets from QEMU. What still moves a p50 from one "
          "boot to the next is mostly where timer ticks land among the loads: a p50 over 500 loads "
          "sits on a step of about 0.4 us between neighbouring loads, and a tick that lands "
          "in another load moves it a step or two. Before each scale mark both kernels load "
          "the same programs in the same order, so the last column compares them load by "
          "load (patched - base, boots of the same seed paired): the median change of a "
          "load's cost, which ticks move by far less. The mixed random churn runs on the first "
          "boot of each kernel only (it is there for the packs), so its load cost is in its "
          "own table and not judged.\n")
        P("| workload | " + " | ".join(f"{k}: boots" for k in tk) + " | " +
          " | ".join(f"{k}: mean" for k in tk) + " | spread within a kernel, max | patched/base"
          " | load by load: median change, loads cheaper on patched |")
        P("| --- |" + " ---: |" * (2 * len(tk) + 3))
        for name, v in lc.items():
            if not all(v.values()):
                continue
            m = {k: mean(v[k]) for k in tk}
            spread = max((max(v[k]) - min(v[k])) / m[k] for k in tk)
            P(f"| {name} | " + " | ".join(", ".join(f"{x:.1f}" for x in v[k]) for k in tk) + " | " +
              " | ".join(f"{m[k]:.1f}" for k in tk) + f" | {100 * spread:.1f}% | " +
              (ratio(m["patched"], m["base"]) if len(tk) == 2 else "n/a") +
              f" | {by_load(name) or 'n/a'} |")

    # --- trampolines ---
    tr = lambda r: r["snap"].get(("tramp", "after"))
    if any(tr(R[k]) for k in kernels):
        tf = next((R[k]["tramp"] for k in kernels if R[k]["tramp"]), {})
        table(f"trampolines ({tf.get('functions', '?')} fentry programs, one a syscall entry "
              "point, each attached and detached every round; counters after loading them and "
              "after the last detach)", [
            ("direct-map splits (l2+l3)", lambda r: splits(r, "tramp", "after"), "{:+,}"),
            ("DirectMap4k delta, kB", lambda r: delta(r, "tramp", "after", "dm4k"), "{:+,}"),
            ("ptdump direct-map 4K entries, delta", lambda r: delta(r, "tramp", "after", "dmap4k"), "{:+,}"),
            ("us per attach, p50", lambda r: r["lat"].get("tramp_attach", {}).get("p50"), "{:.0f}"),
            ("us per attach, p99", lambda r: r["lat"].get("tramp_attach", {}).get("p99"), "{:.0f}"),
            ("us of CPU per attach, p50", lambda r: r["lat"].get("tramp_attach_cpu", {}).get("p50"), "{:.1f}"),
            ("us of CPU per attach, p99", lambda r: r["lat"].get("tramp_attach_cpu", {}).get("p99"), "{:.1f}"),
            ("us per detach, p50", lambda r: r["lat"].get("tramp_detach", {}).get("p50"), "{:.0f}"),
            ("us per detach, p99", lambda r: r["lat"].get("tramp_detach", {}).get("p99"), "{:.0f}"),
            ("us per attach+detach, p50", lambda r: r["lat"].get("tramp", {}).get("p50"), "{:.0f}"),
            ("us per attach+detach, p99", lambda r: r["lat"].get("tramp", {}).get("p99"), "{:.0f}"),
        ], "An attach sizes, allocates, writes and protects a trampoline image and has ftrace "
           "call it; a detach has ftrace stop calling it and waits as ftrace does (the image is "
           "freed later, after RCU). Both wait for timer ticks, which the instruction clock "
           "skips to, so their times are whole ticks on every kernel; the CPU time of the "
           "attaching thread is the attach's own work, the size pass included.")

    # --- fragmented: benchtool -w f (compaction off) and -w g (on) ---
    FRAG = (("frag", "compaction off (vm.extfrag_threshold 1000), as without CONFIG_COMPACTION"),
            ("fragc", "compaction on (the kernel may move the fragmenter's pages)"))
    fr = lambda r, fw: r["frag"].get(fw)
    flast = max((int(t.split("round")[1]) for (wl, t) in R[kernels[0]]["snap"]
                 if wl.endswith("_churn") and wl.startswith("frag") and t.startswith("round")), default=0)
    fwls = lambda fw: [(f"{fw}_churn", f"round{flast}", f"churn, {flast} rounds"),
                       (f"{fw}_random", "after", "random churn"), (f"{fw}_tramp", "after", "trampolines")]
    for fw, how in FRAG:
        if not any(fr(R[k], fw) for k in kernels):
            continue
        rows = [("2 MiB blocks free before fragmenting", lambda r, fw=fw: fr(r, fw) and fr(r, fw)["free_2m_before"], "{:,}"),
                ("2 MiB blocks free after (buddyinfo)", lambda r, fw=fw: fr(r, fw) and fr(r, fw)["free_2m_after"], "{:,}"),
                ("packs kept after the peak was freed (cached)", lambda r, fw=fw: snapval(r, fw, "freed", "cached"), "{:,}")]
        for wl, tag, name in fwls(fw):
            rows += [(f"{name}: 4K fallback packs made", lambda r, wl=wl, tag=tag: delta(r, wl, tag, "fallbacks"), "{:+,}"),
                     (f"{name}: direct-map splits (l2+l3)", lambda r, wl=wl, tag=tag: splits(r, wl, tag), "{:+,}"),
                     (f"{name}: DirectMap4k delta, kB", lambda r, wl=wl, tag=tag: delta(r, wl, tag, "dm4k"), "{:+,}")]
        table(f"fragmented, {how}", rows,
              "A peak of programs is loaded and freed on memory as the boot left it; then "
              "`selftests/lib/fragment.c` takes every free 2 MiB block as a transparent huge page, "
              "splits it and gives back 15 pages in 16 (movable memory), and the workloads run "
              "again under that peak, each counted from its own start to its end. A kernel that "
              "frees a pack as it empties needs a new 2 MiB block for each pack it makes again. "
              "Fallbacks come from the series' statistics (n/a without them).")

    # --- the direct map after each workload, against boot ---
    ends = [wl for wl in WORKLOADS if any(R[k]["snap"].get((wl, "end")) for k in kernels)]
    if ends:
        rows = [("before the first, the profiler's first use: DirectMap4k, kB",
                 lambda r: profiler_cost(r, dm4k), "{:+,}"),
                ("before the first, the profiler's first use: live splits",
                 lambda r: profiler_cost(r, live_splits), "{:+,}")]
        for wl in ends:
            rows += [(f"{wl}: DirectMap4k, kB", lambda r, wl=wl: vs_boot(r, wl, dm4k), "{:+,}"),
                     (f"{wl}: live splits", lambda r, wl=wl: vs_boot(r, wl, live_splits), "{:+,}")]
        table("the direct map once each workload is freed, against before the first", rows,
              "Each workload ends with its programs freed (and settled); its direct map is set "
              "against the snapshot taken before the first workload ran. Live splits: "
              "`direct_map_level{2,3}_splits` less `direct_map_level{2,3}_collapses` (patch 21; "
              "a kernel without them never collapses: splits). The workloads run in this order, "
              "so a row counts what every workload before it left too. Between boot and that "
              "snapshot the bench switches ftrace's function profiler (the scale workload's) on "
              "and off once, around one program's load and free: the first two rows, set "
              "against the boot. The profiler's trampoline, a 4K RO+X page ftrace keeps while "
              "the kernel runs, splits the direct map by itself, and no kernel can put back the "
              "mapping of a page still in use; on base the program splits its own (n/a or +0: "
              "a kernel without the profiler).")

    # --- targets ---
    P("\n### targets (patched)\n")
    T = []
    if has("patched"):
        p = R["patched"]
        bad = []
        rwls = [wl for wl in RANDOM_WLS if p[wl]]
        for wl, tag in [("churn", f"round{last}")] + [(wl, t) for wl in rwls for t in ("peak", "after")] + \
                       [("scale", "peak"), ("scale", "after")]:
            s, d = splits(p, wl, tag), delta(p, wl, tag, "dm4k")
            if s is None or d is None or s != 0 or d != 0:
                bad.append(f"{wl}/{tag}: splits {na(s, '{:+}')}, DirectMap4k {na(d, '{:+}')} kB")
        if tr(p):
            s, d = splits(p, "tramp", "after"), delta(p, "tramp", "after", "dm4k")
            if s is None or d is None or s != 0 or d != 0:
                bad.append(f"tramp: splits {na(s, '{:+}')}, DirectMap4k {na(d, '{:+}')} kB")
        for fw, how in FRAG:
            if not fr(p, fw):
                continue
            fbad = []
            for wl, tag, name in fwls(fw):
                f_, s_ = delta(p, wl, tag, "fallbacks"), splits(p, wl, tag)
                if f_ is None or s_ is None or f_ != 0 or s_ != 0:
                    fbad.append(f"{name}: fallbacks {na(f_, '{:+}')}, splits {na(s_, '{:+}')}")
            T.append((f"fragmented ({fw}), under the earlier peak: 0 fallbacks and 0 splits", not fbad,
                      "; ".join(fbad) or "0 and 0 in churn, random churn and trampolines"))
        hbad = [f"{wl}: {na(vs_boot(p, wl, dm4k), '{:+}')} kB" for wl in ends
                if vs_boot(p, wl, dm4k) is None or vs_boot(p, wl, dm4k) > 0] or \
            ([] if ends else ["not measured: no snapshot at a workload's end"])
        pc = profiler_cost(p, dm4k)
        T.append(("DirectMap4k back at its boot value once each workload is freed", not hbad,
                  ("; ".join(hbad) or f"at or below it after {', '.join(ends)}") +
                  (f" (the value before the first workload, after the profiler's live trampoline: "
                   f"{pc:+,} kB from boot)" if pc is not None else "")))
        T.append(("splits 0 and DirectMap4k delta 0 in every workload", not bad,
                  "; ".join(bad) or f"0 and 0 in churn, {', '.join(rwls)} (peak, after), scale (peak, "
                  f"after){' and trampolines' if tr(p) else ''}"))
        if has("base") and tr(p) and tr(R["base"]):
            for wl, op in (("tramp", "attach+detach"), ("tramp_attach_cpu", "attach CPU time")):
                pl, bl = (R[k]["lat"].get(wl, {}) for k in ("patched", "base"))
                for q in ("p50", "p99"):
                    if pl.get(q) and bl.get(q):
                        # these are whole timer ticks plus the work between them, so
                        # show the tenths of a microsecond that decide the target
                        T.append((f"trampoline {op} {q} <= base", pl[q] <= bl[q],
                                  f"{pl[q]:.1f} vs {bl[q]:.1f} us ({pl[q] - bl[q]:+.1f} us, "
                                  f"{100 * (pl[q] / bl[q] - 1):+.2f}%)"))
        samples = [(s, ent(s)) for wl in rwls for s in p[wl] if ent(s) is not None and s["pack_bytes"] >= 0]
        pk_s, pk_b = p["snap"].get(("scale", "peak")), p["snap"].get(("scale", "before"))
        if pk_s and pk_b and text_entries(pk_s) is not None:
            samples.append((pk_s, text_entries(pk_s) - text_entries(pk_b)))
        over = [f"{e} entries for {s['pack_bytes'] / MIB2:.0f} x 2 MiB" for s, e in samples
                if e > -(-s["pack_bytes"] // MIB2)]
        T.append(("BPF text mapped by at most one entry per 2 MiB of live packs", bool(samples) and not over,
                  "; ".join(over[:3]) or f"{len(samples)} samples ({', '.join(rwls)} churn, scale peak): entries <= packs"))
        if has("base"):
            for name, v in lc.items():
                pv, bv = v["patched"], v["base"]
                if pv and bv:
                    pm, bm = mean(pv), mean(bv)
                    how = f"mean of {len(pv)} and {len(bv)} boots: " if len(pv) + len(bv) > 2 else ""
                    why = f"{how}{pm:.1f} vs {bm:.1f} us ({100 * (pm / bm - 1):+.1f}%)"
                    ok = pm <= bm
                    # where the loads pair up, the median change of a load decides
                    if pairs.get(name):
                        ok = statistics.median(pairs[name]) <= 0
                        why += f"; load by load: {by_load(name)}"
                    T.append((f"p50 load cost <= base ({name})", ok, why))
        if marks and p["prof"]:
            # judged on both: the pack allocator proper, and the JIT's call into it
            # (which adds the kvmalloc() of the writable copy and the header setup)
            for fn in ["bpf_prog_pack_alloc", ALLOC_FN]:
                a0, a1 = prof_us(p, marks[0], fn), prof_us(p, marks[-1], fn)
                name = f"allocator's own time per load flat {marks[0]:,} -> {marks[-1]:,} within 10% (`{fn}`)"
                if a0 and a1:
                    T.append((name, abs(a1 / a0 - 1) <= 0.10,
                              f"{a0:.1f} -> {a1:.1f} us ({100 * (a1 / a0 - 1):+.0f}%)"))
                else:
                    T.append((name, False, "not measured"))
        else:
            T.append(("allocator's own time per load flat within 10%", False, "not measured (no profile)"))
        if marks and has("base"):
            g = lambda r: (r["mark"].get(marks[-1], {}).get("p50") or 0) / (r["mark"].get(marks[0], {}).get("p50") or 1)
            T.append((f"total growth {marks[0]:,} -> {marks[-1]:,} no worse than base",
                      g(p) <= g(R["base"]), f"{g(p):.2f}x vs {g(R['base']):.2f}x"))
        if has("base"):
            # both kernels see the same seeded loads and frees: compare sample by
            # sample, over every pair of boots of the same seed that ran the workload
            for wl in rwls:
                ps, bs = [], []
                for pb, bb in zip(boots["patched"], boots["base"]):
                    if pb[wl] and len(pb[wl]) == len(bb[wl]):
                        ps += pb[wl]
                        bs += bb[wl]
                if not ps:
                    continue
                n, seeds = len(ps), sum(bool(pb[wl]) for pb in boots["patched"])
                pm, bm = (sum(s["packs"] for s in v) / n for v in (ps, bs))
                cmp = [(a["packs"] > b["packs"]) - (a["packs"] < b["packs"]) for a, b in zip(ps, bs)]
                at = [sum(s["packs"] == floor(s) for s in r) for r in (ps, bs)]
                T.append((f"fewer packs held than base under random churn ({wl})", pm < bm,
                          f"mean {pm:.2f} vs {bm:.2f} over {seeds} seed(s); fewer in {cmp.count(-1)}, "
                          f"as many in {cmp.count(0)}, more in {cmp.count(1)} of {n} samples; at the "
                          f"least possible number in {at[0]}/{n} vs {at[1]}/{n}"))
    P("Timings are in the guest's instruction clock (see the top), so the host's load hardly "
      "moves them (two runs of the bench: within 0.9%). The p50 targets compare the means over the boots; at the scale marks, "
      "where every load has its twin on the other kernel, they are judged on the median "
      "change of a load's cost, load by load, and both numbers are shown.\n")
    P("| target | result | numbers |")
    P("| --- | --- | --- |")
    for name, ok, why in T:
        P(f"| {name} | {'met' if ok else '**NOT met**'} | {why} |")
    if any(name.startswith("fewer packs") and not ok for name, ok, _ in T):
        P("\nPacks under random churn: a pack is freed only with its last program, and with "
          "hundreds to thousands of programs a pack, random frees empty none, so the packs held "
          "follow the live bytes plus what fragmentation adds. The series puts a program in the "
          "pack base's first fit would (the oldest with room) and only picks the chunks within "
          "it by best fit, so the packs held differ only by what best fit saves. Fewer would "
          "take fewer bytes a program (its JIT bytes, an 8-byte header and a 16-byte random "
          "pad, rounded up to 64-byte chunks), not another placement. Smaller chunks are no "
          "way there as things stand: `bpf_jit_binary_pack_hdr()` finds a program's header by "
          "masking its address to the chunk, so the image's random start must stay inside "
          "the first chunk, and 16-byte chunks would shrink that window from up to 56 bytes to "
          "8. The series does not reach this target.")
    P(f"\nPlots: `churn_directmap4k.svg`, `churn_splits.svg`, `scale_load_cost.svg`; raw series "
      "in `churn.csv`, `random.csv`, `scale.csv`, `scale_marks.csv`, `scale_mark_loads.csv` (every "
      "load before each mark, every boot), `profile.csv` (all in build/bench/).")
    open(f"{out}/report.md", "w").write("\n".join(md) + "\n")

    # --- CSVs ---
    with open(f"{out}/churn.csv", "w") as f:
        f.write("kernel,round,us_avg,l2_splits,l3_splits,DirectMap4k_kB,dmap_4K,mod_4K,mod_2M,packs\n")
        for k in kernels:
            for rnd in range(0, last + 1):
                s = R[k]["snap"].get(("churn", "before" if rnd == 0 else f"round{rnd}"))
                if not s:
                    continue
                us = R[k]["churn"].get(rnd, {}).get("us_avg", "")
                f.write(f"{k},{rnd},{us},{s['l2']},{s['l3']},{s['dm4k']},{s['dmap4k']},"
                        f"{s['mod4k']},{s['mod2m']},{s['packs']}\n")
    with open(f"{out}/scale.csv", "w") as f:
        f.write("kernel,live,us_avg\n")
        for k in kernels:
            for s in R[k]["scale"]:
                f.write(f"{k},{s['live']},{s['us_avg']}\n")
    with open(f"{out}/scale_marks.csv", "w") as f:
        f.write("kernel,live,p50,p99\n")
        for k in kernels:
            for m, s in sorted(R[k]["mark"].items()):
                f.write(f"{k},{m},{s['p50']},{s['p99']}\n")
    with open(f"{out}/scale_mark_loads.csv", "w") as f:
        f.write("kernel,seed,live,load,us\n")
        for k in kernels:
            for n, r in enumerate(boots[k], 1):
                for m, v in sorted(r["marklat"].items()):
                    f.writelines(f"{k},{n},{m},{i},{x}\n" for i, x in enumerate(v))
    with open(f"{out}/profile.csv", "w") as f:
        f.write("kernel,mark,window,function,hits,us_total,us_per_call\n")
        for k in kernels:
            for m, fns in sorted(R[k]["prof"].items()):
                for fn, d in fns.items():
                    f.write(f"{k},{m},{d.get('win', 0)},{fn},{d['hits']},{d['us']},"
                            f"{d['us'] / d['hits']:.2f}\n")
    with open(f"{out}/random.csv", "w") as f:
        f.write("kernel,workload,step,live,jit_bytes,packs,pack_bytes,mod_4K,mod_2M\n")
        for k in kernels:
            for wl in RANDOM_WLS:
                for s in R[k][wl]:
                    f.write(f"{k},{wl},{s['step']},{s['live']},{s['jit_bytes']},{s['packs']},"
                            f"{s['pack_bytes']},{s['mod4k']},{s['mod2m']}\n")

    # --- gnuplot scripts ---
    def gp(name, title, xl, yl, csv, xcol, ycol, extra="", style="linespoints"):
        lines = ", ".join(f"'< grep ^{k}, {out}/{csv}' using {xcol}:{ycol} with {style} lw 2 title '{k}'"
                          for k in kernels)
        open(f"{out}/{name}.gp", "w").write(
            f"set terminal svg size 720,420 dynamic noenhanced font 'sans,11'\nset output '{out}/{name}.svg'\n"
            f"set datafile separator ','\nset title '{title}'\nset xlabel '{xl}'\nset ylabel '{yl}'\n"
            f"set key left top\nset grid\n{extra}plot {lines}\n")
    gp("churn_directmap4k", "DirectMap4k across churn rounds", "round (0 = before)", "DirectMap4k, kB",
       "churn.csv", 2, 6)
    gp("churn_splits", "direct-map 2M->4K splits across churn rounds", "round (0 = before)",
       "direct_map_level2_splits", "churn.csv", 2, 4)
    gp("scale_load_cost", "load cost against live programs (mean of each 1,000 loads)",
       "live programs", "us per BPF_PROG_LOAD", "scale.csv", 2, 3, "set yrange [0:*]\n", style="lines")


main()
