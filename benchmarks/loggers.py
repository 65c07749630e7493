#!/usr/bin/env python3
"""The default run with and without MLflowLogger and ProfilerHook, side by side.

    benchmarks/loggers.py HOOKFORGE_RUN MLFLOW_PYTHON [--rounds 3] [--epochs 5]
                          [--variants plain,mlflow,profiler]

MLFLOW_PYTHON is the Python of scripts/mlflow.sh: the script starts `mlflow server` from it
(SQLite store, --serve-artifacts, loopback). Each round runs configs/default.yaml three
ways, one after the other: as shipped; with an MLflowLogger beside its TensorBoardLogger
(the trainer and the training runner, step metrics every 64 steps, params, artifacts); and
with a ProfilerHook (its default schedule: wait 1, warmup 1, active 3, one cycle) and a
HookProfiler. It prints each variant's first epoch and median steady epoch (epochs 2 on) per
round, from metrics.csv's epoch_seconds, and the steps per second those give.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "configs", "default.yaml")


def variant(text, name):
    """configs/default.yaml with the hooks of `name` added."""
    if name == "plain":
        return text
    entry = {"mlflow": "{_target: MLflowLogger, params: {interval: 64, experiment: bench}}",
             "profiler": "{_target: ProfilerHook, params: {row_limit: 0}}"}[name]
    text = text.replace("  board: {_target: TensorBoardLogger",
                        f"  extra: {entry}\n  board: {{_target: TensorBoardLogger", 1)
    text = text.replace('hooks: ["${ref:hooks.progress}", "${ref:hooks.board}"]\n\nvalidation_runner',
                        'hooks: ["${ref:hooks.progress}", "${ref:hooks.board}", "${ref:hooks.extra}"]'
                        "\n\nvalidation_runner", 1)
    extra = "      - ${ref:hooks.extra}\n"
    if name == "profiler":
        extra += "      - {_target: HookProfiler, params: {print_at_end: false}}\n"
    marker = "      - ${ref:hooks.board}"
    at = text.index(marker)
    at = text.index("\n", at) + 1
    return text[:at] + extra + text[at:]


def epochs(directory):
    rows = list(csv.DictReader(open(os.path.join(directory, "metrics.csv"))))
    return [float(r["epoch_seconds"]) for r in rows]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("mlflow_python")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--variants", default="plain,mlflow,profiler")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="hookforge-loggers-")
    text = open(DEFAULT).read()
    configs = {}
    for name in args.variants.split(","):
        configs[name] = os.path.join(work, f"{name}.yaml")
        open(configs[name], "w").write(variant(text, name))
    mlflow = os.path.join(os.path.dirname(args.mlflow_python), "mlflow")
    server = subprocess.Popen(
        [mlflow, "server", "--backend-store-uri", f"sqlite:///{work}/mlflow.db", "--serve-artifacts",
         "--artifacts-destination", f"{work}/artifacts", "--host", "127.0.0.1", "--port", "5099",
         "--workers", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false"))
    while True:
        try:
            urllib.request.urlopen("http://127.0.0.1:5099/health", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    env = dict(os.environ, MLFLOW_TRACKING_URI="http://127.0.0.1:5099")
    times = {name: [] for name in configs}
    try:
        for r in range(args.rounds):
            for name, config in configs.items():
                out = os.path.join(work, f"{name}-{r}")
                subprocess.run([args.run, config, "--output", out, "--set",
                                f"trainer.params.epochs={args.epochs}"], check=True, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times[name].append(epochs(out))
    finally:
        server.terminate()
        server.wait()
    steps = 4096 // 16  # the default run's training steps per epoch (4096 samples, batches of 16)
    print(f"{'variant':<10} {'first epoch s':>14} {'steady epoch s (per round)':>34} {'steady steps/s':>15}")
    for name, rounds in times.items():
        firsts = [t[0] for t in rounds]
        steady = [statistics.median(t[1:]) for t in rounds]
        print(f"{name:<10} {statistics.median(firsts):>14.3f} "
              f"{', '.join(f'{s:.3f}' for s in steady):>34} {steps / statistics.median(steady):>15.2f}")
    print("every steady epoch (s):")
    for name, rounds in times.items():
        every = sorted(x for t in rounds for x in t[1:])
        print(f"  {name:<10} median {statistics.median(every):.3f}, quartiles "
              f"{every[len(every) // 4]:.3f}-{every[3 * len(every) // 4]:.3f}, n {len(every)}")


if __name__ == "__main__":
    main()
