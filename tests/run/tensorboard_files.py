#!/usr/bin/env python3
"""TensorBoardLogger's event files, read by TensorBoard's own reader (EventAccumulator).

    tensorboard_files.py HOOKFORGE_RUN CONFIG     (run with a Python that has the `tensorboard` package)

1. A straight run of CONFIG (tests/run/tensorboard.yaml): every scalar in the event files equals
   the value LossLogger wrote to metrics.jsonl (epoch rows, HookProfiler's hook_ms/... figures
   included) or steps.csv (step rows) as float32, at the step the `epoch` scalar gives, and
   there is no event those files lack; metrics.csv agrees with metrics.jsonl; each
   validation shows the chosen samples' input, output and target at their sizes; the config
   is in the Text tab.
2. A crash, then a resume in the middle of an epoch: the same run, its event file cut in the
   middle of a record (a process killed while appending), resumed from the checkpoint after
   step 10. TensorBoard then shows each step once, with the values of the straight run.
"""
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

def timing(tag):  # wall time differs from run to run
    return tag == "epoch_seconds" or tag.startswith("hook_ms/")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(binary, args):
    p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail(f"{' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def load(directory):
    acc = EventAccumulator(os.path.join(directory, "tensorboard"),
                           size_guidance={"scalars": 0, "images": 0, "tensors": 0})
    acc.Reload()
    return acc


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def f32(text):
    return float(np.float32(float(text)))


def expected_scalars(directory, epoch_steps):
    """{tag: {step: value}} from LossLogger's CSV files, as TensorBoardLogger names them."""
    out = {}
    with open(os.path.join(directory, "metrics.jsonl")) as f:
        epoch_rows = [json.loads(line) for line in f]
    csv_rows = rows(os.path.join(directory, "metrics.csv"))
    if len(csv_rows) != len(epoch_rows):
        fail(f"metrics.csv has {len(csv_rows)} rows, metrics.jsonl {len(epoch_rows)}")
    for row, csv_row in zip(epoch_rows, csv_rows):
        for column, cell in csv_row.items():
            if cell != "" and f32(cell) != f32(row[column] if row[column] is not None else "nan"):
                fail(f"metrics.csv's {column} is {cell}, metrics.jsonl's {row[column]}")
        step = epoch_steps[int(row["epoch"])]
        for column, value in row.items():
            if column.startswith("train_") or column.startswith("val_"):
                tag = column.replace("_", "/", 1)
            elif column.startswith("lr_"):
                tag = "lr/" + column[3:]
            else:
                tag = column
            out.setdefault(tag, {})[step] = f32("nan" if value is None else value)
    for row in rows(os.path.join(directory, "steps.csv")):
        step = int(row["step"])
        for column, cell in row.items():
            if column in ("loss",) or column.startswith("lr"):
                tag = "step/" + column.replace("lr_", "lr/")
                out.setdefault(tag, {})[step] = f32(cell)
    return out


def scalars(acc):
    """{tag: {step: value}}, failing on a step seen twice."""
    out = {}
    for tag in acc.Tags()["scalars"]:
        series = {}
        for e in acc.Scalars(tag):
            if e.step in series:
                fail(f"{tag}: step {e.step} appears twice")
            series[e.step] = e.value
        out[tag] = series
    return out


def check_against_csv(directory, label):
    acc = load(directory)
    got = scalars(acc)
    if "epoch" not in got:
        fail(f"{label}: no 'epoch' scalar; tags {sorted(got)}")
    epoch_steps = {int(v): s for s, v in got["epoch"].items()}
    want = expected_scalars(directory, epoch_steps)
    if sorted(got) != sorted(want):
        fail(f"{label}: tags {sorted(got)}, metrics.csv and steps.csv give {sorted(want)}")
    compared = 0
    for tag, series in want.items():
        if sorted(got[tag]) != sorted(series):
            fail(f"{label}: {tag} at steps {sorted(got[tag])}, the CSV files at {sorted(series)}")
        for step, value in series.items():
            if got[tag][step] != value and not (math.isnan(value) and math.isnan(got[tag][step])):
                fail(f"{label}: {tag} at step {step} is {got[tag][step]!r}, the CSV says {value!r}")
            compared += 1
    return acc, got, epoch_steps, compared


def check_images(acc, epoch_steps, label):
    tags = sorted(acc.Tags()["images"])
    want = sorted(f"val/{field}/{i}" for field in ("input", "output", "target") for i in range(3))
    if tags != want:
        fail(f"{label}: image tags {tags}, expected {want}")
    sizes = {"input": (12, 12), "output": (24, 24), "target": (24, 24)}
    for tag in tags:
        images = acc.Images(tag)
        if [i.step for i in images] != sorted(epoch_steps.values()):
            fail(f"{label}: {tag} at steps {[i.step for i in images]}, epochs end at "
                 f"{sorted(epoch_steps.values())}")
        field = tag.split("/")[1]
        for i in images:
            if (i.width, i.height) != sizes[field] or not i.encoded_image_string.startswith(b"\x89PNG"):
                fail(f"{label}: {tag} is {i.width}x{i.height}, expected {sizes[field]} PNG")
    return len(tags) * len(epoch_steps)


def main():
    binary, config = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="hookforge-tensorboard-")
    try:
        straight = os.path.join(work, "straight")
        run(binary, [config, "--output", straight])
        acc, reference, epoch_steps, compared = check_against_csv(straight, "straight run")
        shown = check_images(acc, epoch_steps, "straight run")
        text = acc.Tensors("config")
        if len(text) != 1 or b"TensorBoardLogger" not in text[0].tensor_proto.string_val[0]:
            fail("the config is not in the Text tab under 'config'")

        # The crash: a run whose event file ends in half a record, resumed from step 10.
        crashed = os.path.join(work, "crashed")
        shutil.copytree(straight, crashed)
        [events] = [f for f in os.listdir(os.path.join(crashed, "tensorboard"))]
        with open(os.path.join(crashed, "tensorboard", events), "ab") as f:
            f.write(b"\x40\x00\x00\x00\x00\x00\x00\x00\x11\x22")  # a length, a torn CRC, no data
        run(binary, [config, "--output", crashed, "--resume",
                     os.path.join(crashed, "iter_10.pt")])
        if len(os.listdir(os.path.join(crashed, "tensorboard"))) != 2:
            fail("the resumed run did not write a file of its own")
        acc, resumed, _, _ = check_against_csv(crashed, "resumed run")
        check_images(acc, epoch_steps, "resumed run")
        for tag, series in reference.items():
            if timing(tag):
                continue
            if resumed[tag] != series:
                diff = [s for s in series if resumed[tag].get(s) != series[s]]
                fail(f"resumed run: {tag} differs from the straight run at steps {diff}")
        steps = sorted(reference["step/loss"])
        profiled = sorted(t for t in reference if t.startswith("hook_ms/"))
        if not any("LossLogger.log@on_post_step" in t for t in profiled):
            fail(f"no HookProfiler figure for LossLogger's step rows among {profiled}")
        print(f"tensorboard: {compared} scalars equal metrics.jsonl and steps.csv as float32 "
              f"(among them {len(profiled)} HookProfiler series, e.g. {profiled[0]}), "
              f"{shown} images at {len(epoch_steps)} epoch ends, the config in the Text tab; "
              f"after a torn record and a resume from iter_10.pt, steps {steps[0]}..{steps[-1]} "
              f"each once, equal to the straight run")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
