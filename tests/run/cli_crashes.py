"""cli.py's tests of runs that cannot write or are ended from outside (unwritable, full-disk, kill,
signals): an output directory that cannot be made exits 1; a disk that fills during a checkpoint
exits 1 naming it and keeps the last one; SIGKILL, SIGTERM and SIGINT at random moments, each
followed by --resume, end with an uninterrupted run's scores, bit for bit."""
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import time

from cli_common import closing, epoch_rows, fail, resume, resume_and_compare, rows_written, run


def cmd_unwritable(binary, config):
    with tempfile.TemporaryDirectory() as tmp:
        blocker = os.path.join(tmp, "a-file")
        with open(blocker, "w") as f:
            f.write("not a directory\n")
        for out in (os.path.join(blocker, "run"), "/proc/hookforge-run-test"):
            p = run(binary, [config, "--output", out])
            if p.returncode != 1 or "cannot create the output directory" not in p.stderr:
                fail(f"--output {out}: exit {p.returncode}: {p.stderr[-500:]}")
            if p.stdout.strip():
                fail(f"--output {out}: trained anyway: {p.stdout[-300:]}")
        print("an output directory that cannot be created: exit 1, 'cannot create the output directory', no training")


def failed_write(what, full, says, resume):
    """`resume()` (a --resume into `full` whose 4th checkpoint cannot be written) must exit 1 with
    a message holding `says` and naming epoch_4.pt, leave no temporary file and keep
    last_checkpoint as it was. Returns the run."""
    with open(os.path.join(full, "last_checkpoint")) as f:
        before = f.read()
    p = resume()
    if p.returncode != 1:
        fail(f"{what}: exit {p.returncode}, expected 1: {p.stderr[-800:]}")
    if says not in p.stderr or os.path.join(full, "epoch_4.pt") not in p.stderr:
        fail(f"{what}: the message does not say '{says}', naming the file: {p.stderr[-800:]}")
    left = [name for name in os.listdir(full) if ".tmp." in name]
    if left:
        fail(f"{what}: temporary files left: {left}")
    with open(os.path.join(full, "last_checkpoint")) as f:
        if f.read() != before:
            fail(f"{what}: last_checkpoint changed")
    return p


def really_full(binary, config, run_dir, args):
    """The same on a disk that is really full: a copy of `run_dir` on a tmpfs with 1 MiB to
    spare (a checkpoint is 3.6 MB), resumed: exit 1, the message names the checkpoint and says
    "No space left on device", no temporary file, last_checkpoint unchanged. Needs root and
    mount(2); says so where it cannot."""
    mount = tempfile.mkdtemp()
    used = sum(os.path.getsize(os.path.join(run_dir, n)) for n in os.listdir(run_dir))
    size_kib = used // 1024 + 1024
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", mount],
                                           capture_output=True).returncode != 0:
        os.rmdir(mount)
        return "a really full disk (tmpfs): not tried, mounting one needs root and mount(2)"
    try:
        full = os.path.join(mount, "run")
        shutil.copytree(run_dir, full)
        p = failed_write("a really full disk", full, "No space left on device",
                         lambda: run(binary, [config, "--output", full, "--resume"] + args))
        return f"a really full disk (a {size_kib} KiB tmpfs): exit 1, {p.stderr.strip()[-170:]}"
    finally:
        subprocess.run(["umount", mount])
        os.rmdir(mount)


def cmd_full_disk(binary, config):
    """A disk that fills during a checkpoint write (RLIMIT_FSIZE of 1 MiB, SIGXFSZ ignored, so the
    write fails with EFBIG as with ENOSPC): exit 1 naming the file, no temporary file left,
    last_checkpoint still names the previous, whole checkpoint, and --resume from it ends with
    the straight run's scores."""
    import resource

    def full_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    epochs = lambda n: ["--set", f"trainer.params.epochs={n}"]
    with tempfile.TemporaryDirectory() as tmp:
        straight = os.path.join(tmp, "straight")
        p = run(binary, [config, "--output", straight] + epochs(6))
        if p.returncode != 0:
            fail(f"the straight run: exit {p.returncode}: {p.stderr[-800:]}")
        expected, final_expected = epoch_rows(straight), closing(p.stdout)

        full = os.path.join(tmp, "full")
        p = run(binary, [config, "--output", full] + epochs(3))
        if p.returncode != 0:
            fail(f"the first 3 epochs: exit {p.returncode}: {p.stderr[-800:]}")
        p = failed_write("a full disk", full, "cannot write",
                         lambda: subprocess.run([binary, config, "--output", full, "--resume"] + epochs(6),
                                                capture_output=True, text=True, errors="replace", timeout=600,
                                                preexec_fn=full_disk))
        real = really_full(binary, config, full, epochs(6))
        resume_and_compare(binary, [config, "--output", full] + epochs(6), full, expected, final_expected)
        print(real)
        print(f"a disk full during the 4th checkpoint: exit 1 naming it ({p.stderr.strip()[-160:]}), "
              f"no temporary file, last_checkpoint unchanged; --resume ends with the straight run's scores")


def temps_of(directory, pid):
    """The temporary files of process `pid`'s atomic writes in `directory` (<file>.tmp.<pid>):
    one is there from its creation until it is renamed over its file."""
    try:
        return [name for name in os.listdir(directory) if name.endswith(f".tmp.{pid}")]
    except FileNotFoundError:
        return []


def cmd_kill(binary, config, seed):
    """SIGKILL a run at random moments and --resume it until it ends; its epochs' scores (all of
    metrics.jsonl but the timings) and its closing line must equal an uninterrupted run's.
    The first kill comes at a random share (5-50 %) of the uninterrupted run's time (often before
    the first checkpoint); the others after the row of a random epoch appears (or of the next
    epoch, where an earlier kill came later), which LossLogger writes just before CheckpointSaver
    writes that epoch's checkpoint: alternately a random 0-20 ms later, and as soon as the run's
    temporary file of that checkpoint is seen (<file>.tmp.<pid>), so in the middle of its write
    (if the polling misses 4 epochs' writes, the kill comes then).
    It fails unless some kill came after a completed checkpoint (last_checkpoint written, before
    the kill) and some kill landed while a checkpoint was being written (the dead run's
    temporary file left behind); until one has, up to 6 more runs are killed on sight of a
    checkpoint's temporary file."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        straight = os.path.join(tmp, "straight")
        started = time.time()
        p = run(binary, [config, "--output", straight])
        straight_seconds = time.time() - started
        if p.returncode != 0:
            fail(f"the straight run: exit {p.returncode}: {p.stderr[-800:]}")
        expected = epoch_rows(straight)
        final_expected = [l for l in p.stdout.split("\n") if l.startswith("final: ")][0]

        killed = os.path.join(tmp, "killed")
        targets = sorted(rng.sample(range(2, len(expected) - 12), 8))
        # (epoch row to wait for, or None: a random time; on sight of the checkpoint's temp file?)
        # The random time is a share of the straight run, so a fast machine cannot finish before it.
        plan = [(None, False)] + [(target, i % 2 == 1) for i, target in enumerate(targets)]
        after_checkpoint = 0  # kills that came after a completed checkpoint
        during_write = 0  # kills that left a checkpoint's temporary file: killed while writing it
        kills, extra = 0, 0
        while plan:
            target, on_sight = plan.pop(0)
            if target is not None:
                # An earlier kill may have come later than planned (a write not seen in time).
                target = max(target, rows_written(killed) + 1)
                if target > len(expected) - 6:
                    continue
            proc = subprocess.Popen([binary, config, "--output", killed] + resume(killed),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if target is None:
                time.sleep(rng.uniform(0.05, 0.5) * straight_seconds)
            else:
                while rows_written(killed) < target and proc.poll() is None:
                    time.sleep(0.002)
                if on_sight:
                    # Until a checkpoint's temporary file is seen; a write missed by the polling
                    # lets a few more epochs pass, then the kill comes anyway.
                    while (not any(".pt.tmp." in name for name in temps_of(killed, proc.pid))
                           and rows_written(killed) < target + 4 and proc.poll() is None):
                        time.sleep(0.0002)
                else:
                    time.sleep(rng.uniform(0.0, 0.02))
            if proc.poll() is not None:
                out, err = proc.communicate()
                fail(f"the run ended before its kill (epoch {target}, {rows_written(killed)} rows written, "
                     f"the straight run took {straight_seconds:.2f} s): exit {proc.returncode}: {err[-800:]}")
            checkpointed = os.path.exists(os.path.join(killed, "last_checkpoint"))
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            kills += 1
            after_checkpoint += checkpointed
            during_write += any(".pt.tmp." in name for name in temps_of(killed, proc.pid))
            # The next run resumes from the checkpoint last_checkpoint names, which must be whole:
            # a truncated file fails its checks there (exit 1).
            if not plan and during_write == 0 and extra < 6:
                extra += 1
                plan.append((rows_written(killed) + 1, True))
        if after_checkpoint == 0:
            fail(f"none of the {kills} kills came after a completed checkpoint")
        if during_write == 0:
            fail(f"none of the {kills} kills landed while a checkpoint was being written")
        resume_and_compare(binary, [config, "--output", killed], killed, expected, final_expected)
        print(f"{kills} SIGKILLs (after epochs' rows {targets}{f' and {extra} more' if extra else ''}; "
              f"{after_checkpoint} after a completed checkpoint, {during_write} during a checkpoint write), "
              f"each followed by --resume: the "
              f"{len(expected)} epochs' scores equal the straight run's, bit for bit "
              f"({final_expected.rsplit('|', 1)[0].strip()})")


def stopped_epoch(err, name):
    """The epoch after which hookforge-run said it stopped on signal `name`, from its stderr."""
    m = re.search(rf"hookforge-run: stopped by {name} after epoch (\d+); --resume continues from (\S+)\n", err)
    if not m:
        fail(f"no 'stopped by {name} after epoch N; --resume continues from FILE' line: {err[-800:]}")
    return int(m.group(1)), m.group(2)


def cmd_signals(binary, config, seed):
    """SIGTERM or SIGINT at a random moment of a run (a random 0-20 ms after a random epoch's row),
    four times, each followed by --resume: each run exits 143 / 130 after printing the epoch it
    finished and the checkpoint --resume continues from (that epoch's, which last_checkpoint names),
    with every epoch's row written and no temporary file left. The last --resume ends with the
    scores of an uninterrupted run (all of metrics.jsonl but the timings) and its closing line.
    Then a run with long epochs gets a second SIGINT once it has said it stops: it exits 130 at
    once, in the middle of its epoch."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        straight = os.path.join(tmp, "straight")
        p = run(binary, [config, "--output", straight])
        if p.returncode != 0:
            fail(f"the straight run: exit {p.returncode}: {p.stderr[-800:]}")
        expected = epoch_rows(straight)
        final_expected = closing(p.stdout)
        stopped = os.path.join(tmp, "stopped")
        targets = sorted(rng.sample(range(2, len(expected) - 20), 4))
        signals = [signal.SIGTERM, signal.SIGINT, signal.SIGTERM, signal.SIGTERM]
        seen = []
        for target, sig in zip(targets, signals):
            target = max(target, rows_written(stopped) + 1)
            proc = subprocess.Popen([binary, config, "--output", stopped] + resume(stopped),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            while rows_written(stopped) < target and proc.poll() is None:
                time.sleep(0.002)
            time.sleep(rng.uniform(0.0, 0.02))
            if proc.poll() is not None:
                fail(f"the run ended before its signal (epoch {target}): exit {proc.returncode}")
            proc.send_signal(sig)
            name = signal.Signals(sig).name
            out, err = proc.communicate(timeout=120)
            if proc.returncode != 128 + sig:
                fail(f"{name}: exit {proc.returncode}, expected {128 + sig}: {err[-800:]}")
            epoch, checkpoint = stopped_epoch(err, name)
            if rows_written(stopped) != epoch:
                fail(f"{name}: stopped after epoch {epoch} but metrics.jsonl has {rows_written(stopped)} rows")
            with open(os.path.join(stopped, "last_checkpoint")) as f:
                named = f.read().strip()
            if os.path.basename(checkpoint) != named or f"epoch_{epoch}.pt" != named:
                fail(f"{name}: stopped after epoch {epoch}, said {checkpoint}, last_checkpoint names {named}")
            if temps_of(stopped, proc.pid):
                fail(f"{name}: temporary files left: {temps_of(stopped, proc.pid)}")
            seen.append(f"{name} at epoch {target}: exit {proc.returncode} after epoch {epoch}")
        resume_and_compare(binary, [config, "--output", stopped], stopped, expected, final_expected)

        # Epochs of 100000 samples (seconds each): the second SIGINT comes well inside the epoch.
        slow = os.path.join(tmp, "slow")
        # Without save_last nothing saves a batch, so the first signal waits for the epoch's end.
        with open(config) as f:
            text = f.read()
        if "{max_keep_ckpts: 2}" not in text:
            fail(f"{config}: expected CheckpointSaver's params {{max_keep_ckpts: 2}}")
        no_save_last = os.path.join(tmp, "no_save_last.yaml")
        with open(no_save_last, "w") as f:
            f.write(text.replace("{max_keep_ckpts: 2}", "{max_keep_ckpts: 2, save_last: false}"))
        proc = subprocess.Popen([binary, no_save_last, "--output", slow, "--set", "data.train.params.count=100000"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while rows_written(slow) < 1 and proc.poll() is None:
            time.sleep(0.002)
        proc.send_signal(signal.SIGINT)
        first = proc.stderr.readline()
        if "SIGINT: stopping after this epoch" not in first:
            fail(f"no acknowledgement of SIGINT: {first!r}")
        rows = rows_written(slow)
        proc.send_signal(signal.SIGINT)
        started = time.time()
        out, err = proc.communicate(timeout=30)
        if proc.returncode != 130 or "a second signal: stopping now" not in err or rows_written(slow) != rows:
            fail(f"a second SIGINT: exit {proc.returncode} (expected 130 at once, in the epoch): {err[-400:]}")
        seen.append(f"SIGINT twice: exit 130 in {time.time() - started:.2f} s, inside the epoch")
        print("; ".join(seen[:-1]) + f"; each followed by --resume: the {len(expected)} epochs' scores equal "
              f"the straight run's, bit for bit; {seen[-1]}")
