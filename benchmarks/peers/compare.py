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

Columns: samples/s = training samples per steady-state epoch second; overhead per step =
(the framework's epoch - its language's plain loop's epoch) / steps per epoch; end to end =
the whole LONG run, process start to exit. One compute thread everywhere
(torch.set_num_threads(1), OMP_NUM_THREADS=1); `--workers 0 1` measures hookforge-run and
the Python frameworks with each number of DataLoader workers (threads in hookforge, processes
in PyTorch), so each is also seen in its best configuration.
"""
import argparse
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


def run_once(command, work_dir, log):
    """Wall seconds, CPU seconds (the process and its children) and the RESULT line's dict."""
    shutil.rmtree(work_dir, ignore_errors=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(log, "w") as out:
        code = subprocess.call(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=work_dir.parent)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if code != 0:
        sys.exit(f"{command[0]} failed ({code}); its output: {log}")
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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hookforge-run", required=True, help="hookforge-run built on the peers' LibTorch")
    parser.add_argument("--plain", required=True, help="hookforge_peer_plain")
    parser.add_argument("--data", type=Path, required=True, help="hookforge_peer_data's folder")
    parser.add_argument("--python", default=sys.executable, help="the peers' venv (scripts/peers.sh)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--short", type=int, default=1, help="epochs of the short run")
    parser.add_argument("--long", type=int, default=3, help="epochs of the long run")
    parser.add_argument("--workers", type=int, nargs="+", default=[0],
                        help="DataLoader worker counts, each measured (hookforge-run and the Python peers)")
    parser.add_argument("--only", nargs="*", help="these frameworks only")
    parser.add_argument("--out", type=Path, default=Path("peers.json"), help="every sample, as JSON")
    args = parser.parse_args()

    jobs = frameworks(args)
    names = [n for n in jobs if not args.only or n in args.only]
    scratch = Path(tempfile.mkdtemp(prefix="hookforge-peers-"))
    samples = {n: [] for n in names}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            language, _, command = jobs[name]
            slug = name.replace(" ", "_")
            runs = {}
            for epochs in (args.short, args.long):
                work = scratch / f"{slug}-{epochs}"
                work.mkdir(parents=True, exist_ok=True)
                runs[epochs] = run_once(command(epochs, work), work, scratch / f"{slug}-{epochs}.log")
            (ws, cs, _), (wl, cl, result) = runs[args.short], runs[args.long]
            epoch = (wl - ws) / (args.long - args.short)
            sample = {"round": r, "epoch_s": epoch, "epoch_cpu_s": (cl - cs) / (args.long - args.short),
                      "end_to_end_s": wl, "result": result}
            samples[name].append(sample)
            print(f"round {r + 1}/{args.rounds} {name:14} epoch {epoch:6.2f} s  end to end {wl:6.1f} s  "
                  f"val_psnr {result.get('val_psnr', float('nan')):.2f}", flush=True)

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
        print(f"| {name} | {language} | {TRAIN_SAMPLES / t['epoch_s']:.0f} | {t['epoch_s']:.2f} | "
              f"{t['epoch_cpu_s']:.2f} | {overhead} | {t['end_to_end_s']:.1f} | {t['val_psnr']:.2f} |")
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                    "samples": samples, "medians": table}, indent=1))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
