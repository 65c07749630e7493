"""cli.py's tests of resuming beyond an unchanged restart (longer, mid-epoch): a run resumed with
more epochs goes on with the config's cosine T_max and says so; a run checkpointed between
batches (ImageFolder PNGs written here, augmentations, 2 loader workers), SIGKILLed and
SIGTERMed in the middle of epochs, resumes to the straight run's scores and step rows."""
import json
import math
import os
import random
import re
import signal
import struct
import subprocess
import tempfile
import time
import zlib

from cli_common import SHRUNK, closing, epoch_rows, fail, resume_and_compare, rows_written, run


def write_png(path, width, height, pixel):
    """An 8-bit RGB PNG whose pixel (x, y) is pixel(x, y) -> (r, g, b): zlib and the format's
    three chunks, so the test needs no imaging package."""
    rows = b"".join(b"\x00" + bytes(c for x in range(width) for c in pixel(x, y)) for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def last_named(directory):
    try:
        with open(os.path.join(directory, "last_checkpoint")) as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


def cmd_longer(binary):
    """The shrunk default (cosine T_max: ${trainer.params.epochs}) run for 2 epochs, then resumed
    with --set trainer.params.epochs=3: hookforge-run says that the scheduler goes on with the
    config's T_max 3, and epoch 3 trains at the rate a straight 3-epoch run uses there (not at
    eta_min, where the 2-epoch schedule ended)."""
    with tempfile.TemporaryDirectory() as tmp:
        out, straight = os.path.join(tmp, "run"), os.path.join(tmp, "straight")
        p = run(binary, SHRUNK + ["--set", "trainer.params.epochs=2", "--output", out])
        if p.returncode != 0:
            fail(f"the 2-epoch run: exit {p.returncode}: {p.stderr[-800:]}")
        p = run(binary, SHRUNK + ["--set", "trainer.params.epochs=3", "--output", out, "--resume"])
        if p.returncode != 0:
            fail(f"the resumed run: exit {p.returncode}: {p.stderr[-800:]}")
        said = "hookforge-run: the scheduler goes on with the config's settings from epoch 3: T_max 3 (the checkpoint's: 2)"
        if said not in p.stdout:
            fail(f"no '{said}' line: {p.stdout[-800:]}")
        q = run(binary, SHRUNK + ["--set", "trainer.params.epochs=3", "--output", straight])
        if q.returncode != 0:
            fail(f"the straight 3-epoch run: exit {q.returncode}: {q.stderr[-800:]}")
        resumed, expected = epoch_rows(out), epoch_rows(straight)
        if len(resumed) != 3 or resumed[2]["lr"] == 1e-5 or resumed[2]["lr"] != expected[2]["lr"]:
            fail(f"learning rates: resumed {[r['lr'] for r in resumed]}, straight 3 epochs {[r['lr'] for r in expected]}")
        print(f"{said!r}; epoch 3 trains at lr {resumed[2]['lr']:.6g} as a straight 3-epoch run does "
              f"(the checkpoint's T_max 2 would give eta_min, 1e-05)")


def cmd_mid_epoch(binary, config):
    """Checkpoints between batches (CheckpointSaver by_epoch: false, every 5 steps of 32-batch
    epochs) of a run on PNG files with random patches, flips and rotations drawn by 2 loader
    workers: (1) SIGKILL once last_checkpoint names a checkpoint in the middle of epoch 2, then
    --resume; (2) SIGTERM in the middle of epoch 3: exit 143 naming the epoch, the step and the
    checkpoint iter_<step>.pt that last_checkpoint names, no temporary file; then --resume to the
    end: every epoch's scores (metrics.jsonl but the timings), every step row (steps.jsonl) and
    the closing line equal a straight run's, bit for bit."""
    steps_per_epoch = 32
    with tempfile.TemporaryDirectory() as tmp:
        images = os.path.join(tmp, "images")
        os.makedirs(images)
        rng = random.Random(7)
        for i in range(8):
            fx, fy, phase = rng.uniform(0.1, 0.6), rng.uniform(0.1, 0.6), rng.uniform(0, 6)
            write_png(os.path.join(images, f"img{i}.png"), 40, 36, lambda x, y: (
                int(127 + 120 * math.sin(fx * x + phase)),
                int(127 + 120 * math.cos(fy * y - phase)),
                (x * 5 + y * 3 + i * 17) % 256))
        args = lambda out: [config, "--output", out, "--set", f"images={images}"]
        straight = os.path.join(tmp, "straight")
        p = run(binary, args(straight))
        if p.returncode != 0:
            fail(f"the straight run: exit {p.returncode}: {p.stderr[-800:]}")
        expected = epoch_rows(straight)
        with open(os.path.join(straight, "steps.jsonl")) as f:
            expected_steps = [{k: v for k, v in json.loads(l).items()} for l in f]
        final_expected = closing(p.stdout)

        out = os.path.join(tmp, "interrupted")
        seen = []
        # (1) SIGKILL in the middle of epoch 2.
        proc = subprocess.Popen([binary] + args(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        def step_of(name):
            m = re.fullmatch(r"iter_(\d+)\.pt", name)
            return int(m.group(1)) if m else 0
        while not (steps_per_epoch < step_of(last_named(out)) < 2 * steps_per_epoch) and proc.poll() is None:
            time.sleep(0.001)
        if proc.poll() is not None:
            fail(f"the run ended before its kill: exit {proc.returncode}: {proc.stderr.read()[-800:]}")
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        killed_at = last_named(out)
        if not (steps_per_epoch < step_of(killed_at) < 2 * steps_per_epoch) or step_of(killed_at) % 5:
            fail(f"SIGKILL: last_checkpoint names {killed_at!r}, not a checkpoint in the middle of epoch 2")
        seen.append(f"SIGKILL with last_checkpoint at {killed_at}")

        # (2) --resume, then SIGTERM in the middle of epoch 3.
        proc = subprocess.Popen([binary] + args(out) + ["--resume"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while step_of(last_named(out)) <= 2 * steps_per_epoch + 5 and proc.poll() is None:
            time.sleep(0.001)
        if proc.poll() is not None:
            fail(f"the resumed run ended before its SIGTERM: exit {proc.returncode}: {proc.stderr.read()[-800:]}")
        proc.send_signal(signal.SIGTERM)
        stdout, err = proc.communicate(timeout=120)
        if f"resumed from {os.path.join(out, killed_at)}" not in stdout:
            fail(f"the run did not resume from {killed_at}: {stdout[-500:]}")
        if proc.returncode != 143:
            fail(f"SIGTERM: exit {proc.returncode}, expected 143: {err[-800:]}")
        m = re.search(r"hookforge-run: stopped by SIGTERM in epoch (\d+) after step (\d+); --resume continues from (\S+)\n", err)
        if not m:
            fail(f"no 'stopped by SIGTERM in epoch E after step N; --resume continues from FILE' line: {err[-800:]}")
        epoch, step, said = int(m.group(1)), int(m.group(2)), m.group(3)
        if epoch != 3 or not 2 * steps_per_epoch < step < 3 * steps_per_epoch:
            fail(f"SIGTERM: stopped in epoch {epoch} after step {step}, expected the middle of epoch 3")
        if last_named(out) != f"iter_{step}.pt" or os.path.basename(said) != last_named(out):
            fail(f"SIGTERM: said {said}, last_checkpoint names {last_named(out)}, expected iter_{step}.pt")
        if rows_written(out) != 2:
            fail(f"SIGTERM in epoch 3: metrics.jsonl has {rows_written(out)} rows, expected 2")
        if [n for n in os.listdir(out) if ".tmp." in n]:
            fail(f"SIGTERM: temporary files left: {[n for n in os.listdir(out) if '.tmp.' in n]}")
        seen.append(f"SIGTERM: exit 143 in epoch 3 after step {step}, saved as iter_{step}.pt")

        resume_and_compare(binary, args(out), out, expected, final_expected)
        with open(os.path.join(out, "steps.jsonl")) as f:
            got_steps = [json.loads(l) for l in f]
        if got_steps != expected_steps:
            fail(f"the step rows differ from the straight run's: {len(got_steps)} vs {len(expected_steps)} rows")
        print("; ".join(seen) + f"; each followed by --resume: the {len(expected)} epochs' scores and "
              f"{len(expected_steps)} step rows equal the straight run's, bit for bit "
              f"({final_expected.rsplit('|', 1)[0].strip()})")
