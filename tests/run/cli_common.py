"""Helpers that cli.py's commands share: running hookforge-run and failing with a message, the
shrunk default config, reading a run's metrics.jsonl, resuming a run and comparing it with an
uninterrupted one, its closing line, and starting the --nproc launcher to learn its ranks' pids."""
import json
import os
import re
import subprocess
import sys
import time


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(binary, args, cwd=None, timeout=600):
    return subprocess.run([binary] + args, cwd=cwd, capture_output=True, text=True, errors="replace",
                          timeout=timeout)


def nothing_in(directory):
    return not os.listdir(directory)


# The default config, shrunk for tests: 256 training and 64 validation images.
SHRUNK = ["--set", "data.train.params.count=256", "--set", "data.val.params.count=64"]


def epoch_rows(directory):
    rows = []
    with open(os.path.join(directory, "metrics.jsonl")) as f:
        for text in f:
            row = json.loads(text)
            row.pop("epoch_seconds", None)
            rows.append(row)
    return rows


def rows_written(directory):
    """Complete rows of metrics.jsonl (a row being appended is not counted)."""
    try:
        with open(os.path.join(directory, "metrics.jsonl")) as f:
            return f.read().count("\n")
    except FileNotFoundError:
        return 0


def resume(directory):
    """--resume, as a user would give it after a crash: where the run died between its first
    checkpoint's rename and the write of last_checkpoint, hookforge-run refuses to guess (exit 2,
    "holds checkpoints ... but no last_checkpoint") and the checkpoint is named."""
    if os.path.exists(os.path.join(directory, "last_checkpoint")) or not os.path.isdir(directory):
        return ["--resume"]
    checkpoints = sorted(name for name in os.listdir(directory) if name.endswith(".pt"))
    return ["--resume", os.path.join(directory, checkpoints[-1])] if checkpoints else ["--resume"]


def resume_and_compare(binary, args, directory, expected, final_expected):
    """`args` with --resume: it must resume and end with the epoch rows `expected` and the closing
    line `final_expected` (but the wall time) of an uninterrupted run."""
    p = run(binary, args + resume(directory))
    if p.returncode != 0:
        fail(f"the resumed run: exit {p.returncode}: {p.stderr[-800:]}")
    if "resumed from" not in p.stdout:
        fail("the run did not resume: " + p.stdout[-500:])
    got = epoch_rows(directory)
    if got != expected:
        fail(f"the resumed run's epoch rows differ from the straight run's:\n{got[-3:]}\nvs\n{expected[-3:]}")
    strip = lambda s: s.rsplit("|", 1)[0]
    if strip(closing(p.stdout)) != strip(final_expected):
        fail(f"final lines differ: {closing(p.stdout)} vs {final_expected}")


def closing(stdout):
    lines = [l for l in stdout.split("\n") if "final: " in l]
    if len(lines) != 1:
        fail(f"expected one closing line, got {len(lines)}: {stdout[-1500:]}")
    return lines[0]


def pids_of(start_line):
    return [int(x) for x in re.findall(r"rank \d+: pid (\d+)", start_line)]


def start_launcher(binary, args, log):
    """The launcher with its stdout in `log` (read by polling), and the ranks' pids."""
    out = open(log, "w")
    proc = subprocess.Popen([binary] + args, stdout=out, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        with open(log) as f:
            first = f.readline()
        if first.endswith("\n"):
            return proc, out, pids_of(first)
        if proc.poll() is not None:
            fail(f"the launcher ended before starting ranks: exit {proc.returncode}: {proc.stderr.read()[-800:]}")
        time.sleep(0.01)
    fail("the launcher printed no start line within 60 s")
