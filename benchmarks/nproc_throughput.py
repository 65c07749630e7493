#!/usr/bin/env python3
"""Throughput of hookforge-run's default model with 1 and 2 ranks, and the gradient all-reduce.

  benchmarks/nproc_throughput.py BIN [EPOCHS]

Runs the embedded default config (ESPCN x2, 4096 training images of 48 x 48, 128 for
validation) for EPOCHS epochs (default 2) in each setting below, and prints one table row
each: the training samples per second of the last epoch (4096 / that epoch's seconds from
metrics.jsonl, validation included, as the run's own epoch time counts it), and, with 2
ranks, the time in the gradient all-reduce per update (hookforge-run's summary line:
GradientAllReduce::seconds() / updates(), packing into buckets included).
  1 rank,  batch 16, 1 thread    the default as it is (system.threads: 1)
  1 rank,  batch 16, 2 threads   the same on both cores
  2 ranks, batch 8,  1 thread    the same global batch (16), one core per rank
  2 ranks, batch 16, 1 thread    twice the global batch
"""
import json
import os
import re
import subprocess
import sys
import tempfile

SETTINGS = [
    ("1 rank, batch 16, 1 thread", 1, 16, 1),
    ("1 rank, batch 16, 2 threads", 1, 16, 2),
    ("2 ranks, batch 8 each (global 16), 1 thread each", 2, 8, 1),
    ("2 ranks, batch 16 each (global 32), 1 thread each", 2, 16, 1),
]


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    binary = os.path.abspath(argv[1])
    epochs = int(argv[2]) if len(argv) > 2 else 2
    print(f"| setting | samples/s (epoch {epochs}) | epoch s | all-reduce per update | final val PSNR |")
    print("|---|---|---|---|---|")
    for name, nproc, batch, threads in SETTINGS:
        with tempfile.TemporaryDirectory() as tmp:
            args = [binary, "--output", tmp, "--set", f"trainer.params.epochs={epochs}", "--set",
                    f"loaders.train.params.batch_size={batch}", "--set", f"system.threads={threads}"]
            if nproc > 1:
                args += ["--nproc", str(nproc)]
            p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
            if p.returncode != 0:
                print(f"{name}: exit {p.returncode}: {p.stderr[-800:]}")
                return 1
            with open(os.path.join(tmp, "metrics.jsonl")) as f:
                last = [json.loads(l) for l in f][-1]
            seconds = last["epoch_seconds"]
            m = re.search(r"gradient all-reduce: ([0-9.]+) s over (\d+) updates \(([0-9.]+) ms per update\)", p.stdout)
            allreduce = f"{m.group(3)} ms ({m.group(1)} s / {m.group(2)} updates)" if m else "-"
            psnr = re.search(r"PSNR ([0-9.]+) dB", p.stdout).group(1)
            print(f"| {name} | {4096 / seconds:.0f} | {seconds:.2f} | {allreduce} | {psnr} dB |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
