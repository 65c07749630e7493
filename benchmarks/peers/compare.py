#!/usr/bin/env python3
"""The default job in hookforge and in each peer, measured side by side.

    benchmarks/peers/run.sh            # builds, installs, runs this; see docs/benchmarks.md

Each framework runs the same job (configs/default.yaml: ESPCN x2 on the same 4096 + 128
images, batch 16, Adam, cosine schedule, validation with PSNR and SSIM, a checkpoint per
epoch, early stopping) twice per round: for SHORT and for LONG epochs. The difference of
the two runs' wall times, divided by LONG - SHORT, is one steady-state epoch (training,
validation, checkpoint, logging) with every start-up cost (imports, LibTorch's start,
drawing or loading the images, the first epoch's warm-up) cancelled. Rounds interleave the
frameworks, in a rotated order, so a slow minute of this shared machine falls on all of
them; the table takes each framework's median over the rounds.

--side-by-side runs the jobs of a round at the same time instead, each pinned to a CPU of
its own (with its threads and child processes), the CPUs swapped every round. A slow
minute then falls on every job of the round alike, and each round's ratio to the first
job (the plain loop) is printed with the median, least and greatest over the rounds: the
figure to read when the difference is smaller than the machine's drift between runs. It
is conservative for a job with helper threads (hookforge-run's background plotting and
writers share its one CPU).

"hookforge C++ API" (with --api) is the job written against hookforge's headers as a user of
the library writes it (benchmarks/peers/api_job.cpp): the Trainer, the runners and the
built-in hooks without the config layer.

Columns: samples/s = training samples per steady-state epoch second; overhead per step =
(the framework's epoch - its language's plain loop's epoch) / steps per epoch; end to end =
the whole LONG run, process start to exit. One compute thread everywhere
(torch.set_num_threads(1), OMP_NUM_THREADS=1); `--workers 0 1` measures hookforge-run and
the Python frameworks with each number of DataLoader workers (threads in hookforge, processes
in PyTorch), so each is also seen in its best configuration.
"""
import argparse
import concurrent.futures
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAIN_SAMPLES, BATCH = 4096, 16
STEPS = -(-TRAIN_SAMPLES // BATCH)


def frameworks(args):
    """name -> (language, its language's plain loop, command for `epochs` into `work_dir`): one
    entry per framework and DataLoader worker count (--workers), none for the plain C++ loop."""
    jobs = {"plain C++": ("C++", "plain C++",
                          lambda e, w: [args.plain, "--epochs", str(e), "--work-dir", str(w)])}
    if args.api:
        jobs["hookforge C++ API"] = ("C++", "plain C++",
                                     lambda e, w: [args.api, "--epochs", str(e), "--work-dir", str(w)])
    scripts = {"plain PyTorch": "plain.py", "Lightning": "lightning_job.py",
               "MMEngine": "mmengine_job.py", "Ignite": "ignite_job.py"}
    for workers in args.workers:
        tag = f", {workers} worker{'s' if workers != 1 else ''}" if len(args.workers) > 1 else ""
        jobs[f"hookforge-run{tag}"] = ("C++", "plain C++", lambda e, w, n=workers: [
            args.hookforge_run, "--set", f"trainer.params.epochs={e}", "--set",
            f"system.work_dir={w}", "--set", f"loaders.train.params.workers={n}"])
        for name, script in scripts.items():
            jobs[f"{name}{tag}"] = ("Python", f"plain PyTorch{tag}", lambda e, w, n=workers, s=script: [
                args.python, str(HERE / s), "--data", str(args.data), "--epochs", str(e),
                "--work-dir", str(w), "--workers", str(n)])
    return jobs


def run_once(command, work_dir, log, core=None):
    """Wall seconds, CPU seconds (the process and the children it waited for) and the RESULT
    line's dict; on CPU `core` alone when one is given (its threads and children too)."""
    shutil.rmtree(work_dir, ignore_errors=True)
    work_dir.mkdir(parents=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    pin = (lambda: os.sched_setaffinity(0, {core})) if core is not None else None
    start = time.perf_counter()
    with open(log, "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                   cwd=work_dir.parent, preexec_fn=pin)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime
    if process.returncode != 0:
        sys.exit(f"{command[0]} failed ({process.returncode}); its output: {log}")
    result = {}
    for line in Path(log).read_text(errors="replace").splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
    metrics = work_dir / "metrics.jsonl"  # hookforge-run's: its last epoch's scores
    if not result and metrics.exists():
        last = json.loads(metrics.read_text().splitlines()[-1])
        result = {"epochs": last["epoch"], "val_psnr": last["val_psnr"],
                  "val_bicubic_psnr": last["val_bicubic_psnr"]}
    return wall, cpu, result


def measure(jobs, names, epochs, scratch, cores):
    """Run each of `names` for `epochs`, one after the other, or all at once with `cores` (a CPU
    per job); {name: (wall, cpu, result)}."""
    def one(name, core=None):
        slug = name.replace(" ", "_")
        work = scratch / f"{slug}-{epochs}"
        return run_once(jobs[name][2](epochs, work), work, scratch / f"{slug}-{epochs}.log", core)
    if not cores:
        return {name: one(name) for name in names}
    with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
        running = {name: pool.submit(one, name, core) for name, core in zip(names, cores)}
        return {name: future.result() for name, future in running.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hookforge-run", required=True, help="hookforge-run built on the peers' LibTorch")
    parser.add_argument("--plain", required=True, help="hookforge_peer_plain")
    parser.add_argument("--api", help="hookforge_peer_api: the job through hookforge's C++ API")
    parser.add_argument("--data", type=Path, required=True, help="hookforge_peer_data's folder")
    parser.add_argument("--python", default=sys.executable, help="the peers' venv (scripts/peers.sh)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--short", type=int, default=1, help="epochs of the short run")
    parser.add_argument("--long", type=int, default=3, help="epochs of the long run")
    parser.add_argument("--workers", type=int, nargs="+", default=[0],
                        help="DataLoader worker counts, each measured (hookforge-run and the Python peers)")
    parser.add_argument("--only", nargs="*", help="these frameworks only")
    parser.add_argument("--side-by-side", action="store_true",
                        help="run the jobs of a round at the same time, each alone on its own CPU, "
                             "so a slow minute of the machine falls on both (--only two jobs on 2 CPUs)")
    parser.add_argument("--out", type=Path, default=Path("peers.json"), help="every sample, as JSON")
    args = parser.parse_args()

    jobs = frameworks(args)
    names = [n for n in jobs if not args.only or n in args.only]
    cpus = sorted(os.sched_getaffinity(0))
    if args.side_by_side and len(names) > len(cpus):
        sys.exit(f"--side-by-side runs every job at once, a CPU each: {len(names)} jobs, {len(cpus)} CPUs")
    scratch = Path(tempfile.mkdtemp(prefix="hookforge-peers-"))
    samples = {n: [] for n in names}
    for r in range(args.rounds):
        # rotated, so no job always runs first (one after the other) or on the same CPU (at once)
        order = names[r % len(names):] + names[:r % len(names)]
        groups = [order] if args.side_by_side else [[name] for name in order]
        for group in groups:
            cores = cpus[:len(group)] if args.side_by_side else None
            runs = {e: measure(jobs, group, e, scratch, cores) for e in (args.short, args.long)}
            for i, name in enumerate(group):
                (ws, cs, _), (wl, cl, result) = runs[args.short][name], runs[args.long][name]
                epoch = (wl - ws) / (args.long - args.short)
                sample = {"round": r, "epoch_s": epoch, "epoch_cpu_s": (cl - cs) / (args.long - args.short),
                          "end_to_end_s": wl, "result": result, "cpu": cores[i] if cores else None}
                samples[name].append(sample)
                where = f" on CPU {cores[i]}" if cores else ""
                print(f"round {r + 1}/{args.rounds} {name:14} epoch {epoch:6.2f} s  end to end {wl:6.1f} s  "
                      f"val_psnr {result.get('val_psnr', float('nan')):.2f}{where}", flush=True)

    table = {}
    for name in names:
        table[name] = {k: statistics.median(s[k] for s in samples[name])
                       for k in ("epoch_s", "epoch_cpu_s", "end_to_end_s")}
        table[name]["val_psnr"] = samples[name][-1]["result"].get("val_psnr")
    print()
    print(f"| framework | language | samples/s | epoch (s) | CPU s per epoch | overhead per step over "
          f"its language's plain loop | end to end, {args.long} epochs (s) | val PSNR |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        language, plain, _ = jobs[name]
        t = table[name]
        overhead = "—"
        if plain in table and name != plain:
            ms = (t["epoch_s"] - table[plain]["epoch_s"]) / STEPS * 1e3
            overhead = f"{ms:+.2f} ms ({t['epoch_s'] / table[plain]['epoch_s'] - 1:+.1%})"
        psnr = "—" if t["val_psnr"] is None else f"{t['val_psnr']:.2f}"
        print(f"| {name} | {language} | {TRAIN_SAMPLES / t['epoch_s']:.0f} | {t['epoch_s']:.2f} | "
              f"{t['epoch_cpu_s']:.2f} | {overhead} | {t['end_to_end_s']:.1f} | {psnr} |")
    ratios = {}
    if len(names) > 1:
        first = names[0]
        print(f"\nEach round's epoch ÷ {first}'s epoch of the same round"
              f"{' (run at the same time)' if args.side_by_side else ''}:\n")
        print("| framework | median | min | max | rounds |")
        print("|---|---:|---:|---:|---|")
        for name in names[1:]:
            r = [b["epoch_s"] / a["epoch_s"] for a, b in zip(samples[first], samples[name])]
            ratios[name] = r
            print(f"| {name} | {statistics.median(r):.3f} | {min(r):.3f} | {max(r):.3f} | "
                  f"{' '.join(f'{x:.3f}' for x in r)} |")
        if args.side_by_side and len(names) == 2 and args.rounds >= 2:
            # Rounds 2k and 2k+1 swap the CPUs; one CPU can be steadily slower than the other
            # (its interrupts, the host's placement), which the geometric mean of the two cancels.
            r = ratios[names[1]]
            pairs = [(r[i] * r[i + 1]) ** 0.5 for i in range(0, len(r) - 1, 2)]
            ratios["pairs"] = pairs
            print(f"\nThe same, each two rounds with the CPUs swapped taken together (geometric mean):\n")
            print("| framework | median | min | max | pairs |")
            print("|---|---:|---:|---:|---|")
            print(f"| {names[1]} | {statistics.median(pairs):.3f} | {min(pairs):.3f} | {max(pairs):.3f} | "
                  f"{' '.join(f'{x:.3f}' for x in pairs)} |")
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                    "samples": samples, "medians": table, "ratios": ratios}, indent=1))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
