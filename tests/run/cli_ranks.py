"""cli.py's tests of --nproc, ranks on one machine (nproc, nproc-resume, nproc-kill): 2 ranks
score as 1 rank with the same global batch, rank 0 alone writing, and config errors exit 2
before a rank starts; a 2-rank run SIGKILLed and SIGTERMed through its launcher resumes to the
straight 2-rank run's scores; a rank SIGKILLed makes the launcher exit 1 naming it."""
import os
import random
import re
import signal
import subprocess
import tempfile
import time

from cli_common import (SHRUNK, closing, epoch_rows, fail, nothing_in, resume, resume_and_compare,
                        rows_written, run, start_launcher)


def psnr_of(final_line):
    m = re.search(r"PSNR ([0-9.]+) dB", final_line)
    if not m:
        fail("no PSNR in " + final_line)
    return float(m.group(1))


def rank_lines(text, rank):
    return [l for l in text.split("\n") if l.startswith(f"[rank {rank}] ")]


def cmd_nproc(binary):
    """(a) --nproc 2 with batch 8 per rank against 1 rank with batch 16 (the same global batch):
    the same scores (float tolerance), files written once, by rank 0; (d) config errors
    with --nproc 2 exit 2 before any rank starts."""
    with tempfile.TemporaryDirectory() as tmp:
        one, two = os.path.join(tmp, "one"), os.path.join(tmp, "two")
        short = SHRUNK + ["--set", "trainer.params.epochs=2"]
        p1 = run(binary, short + ["--output", one])
        if p1.returncode != 0:
            fail(f"1 rank: exit {p1.returncode}: {p1.stderr[-1500:]}")
        p2 = run(binary, ["--nproc", "2"] + short + ["--set", "loaders.train.params.batch_size=8", "--output", two],
                 timeout=300)
        if p2.returncode != 0:
            fail(f"--nproc 2: exit {p2.returncode}: {p2.stdout[-1500:]}\n{p2.stderr[-1500:]}")
        if not p2.stdout.startswith("hookforge-run: started 2 ranks on 127.0.0.1:"):
            fail("--nproc 2: no start line: " + p2.stdout[:300])
        f1, f2 = closing(p1.stdout), closing(p2.stdout)
        if not f2.startswith("[rank 0] final: "):
            fail("the closing line is not rank 0's: " + f2)
        if abs(psnr_of(f1) - psnr_of(f2)) > 0.05:
            fail(f"PSNR of 2 ranks {psnr_of(f2)} vs 1 rank {psnr_of(f1)}: more than 0.05 dB apart")
        # Rank 1 prints nothing (its writers are disabled); every line of the run is rank 0's.
        for stream, text in (("stdout", p2.stdout), ("stderr", p2.stderr)):
            if rank_lines(text, 1):
                fail(f"rank 1 printed on {stream}: {rank_lines(text, 1)[:3]}")
        if "gradient all-reduce:" not in p2.stdout:
            fail("no all-reduce summary: " + p2.stdout[-500:])
        # The same files, once: rank 0 writes them, rank 1 none (no second metrics row per epoch).
        if sorted(os.listdir(one)) != sorted(os.listdir(two)):
            fail(f"files differ: {sorted(os.listdir(two))} vs 1 rank's {sorted(os.listdir(one))}")
        rows1, rows2 = epoch_rows(one), epoch_rows(two)
        if len(rows2) != 2:
            fail(f"metrics.jsonl of 2 ranks has {len(rows2)} rows, expected 2 (one per epoch, rank 0 only)")
        with open(os.path.join(two, "metrics.csv")) as f:
            if len(f.read().strip().split("\n")) != 3:
                fail("metrics.csv of 2 ranks: expected a header and 2 rows")
        # Global metrics: every score (validation over both ranks' shards, training over both
        # ranks' batches) equals the 1-rank run's within float tolerance; one rank's half would not.
        for r1, r2 in zip(rows1, rows2):
            for key, v1 in r1.items():
                v2 = r2[key]
                if abs(v1 - v2) > 1e-4 * max(1.0, abs(v1)):
                    fail(f"epoch {r1['epoch']}: {key} {v2} with 2 ranks vs {v1} with 1")
        print(f"--nproc 2, batch 8 per rank: {f2.split('final: ')[1]}")
        print(f"1 rank, batch 16:            {f1.split('final: ')[1]}")
        print("the same scores every epoch (metrics.jsonl within 1e-4), files written once, rank 1 silent")

    # (d) config errors are found by the launcher: exit 2, one line, no rank started, no file.
    checks = [
        (["--set", "trainer.params.epochs=ten"], "trainer.params.epochs: expected an integer"),
        (["--set", "distributed={backend: mpi}"], "distributed.backend: expected one of gloo, nccl, got 'mpi'"),
        (["--set", "distributed={timout: 3}"], "expected a key of distributed"),
        (["--set", "loaders.train.params.batch_size=0"], "batch_size"),
    ]
    for args, fragment in checks:
        with tempfile.TemporaryDirectory() as cwd:
            p = run(binary, ["--nproc", "2"] + args + ["--output", "out"], cwd=cwd)
            if p.returncode != 2 or fragment not in p.stderr:
                fail(f"--nproc 2 {args}: exit {p.returncode}, expected 2 with '{fragment}': {p.stderr[-400:]}")
            if "started" in p.stdout or "[rank" in p.stdout + p.stderr:
                fail(f"--nproc 2 {args}: ranks were started: {p.stdout[-300:]}")
            if not nothing_in(cwd):
                fail(f"--nproc 2 {args}: files created")
    for args, fragment in ((["--nproc", "0"], "--nproc needs a number of ranks in [1, 1024], got '0'"),
                           (["--nproc", "two"], "got 'two'")):
        p = run(binary, args + ["--check"])
        if p.returncode != 2 or fragment not in p.stderr:
            fail(f"{args}: exit {p.returncode}: {p.stderr[-300:]}")
    print(f"{len(checks) + 2} config and command-line errors with --nproc 2: exit 2, no rank started, no file")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (not reaped yet) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pids, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def cmd_nproc_resume(binary):
    """(b) A 2-rank run whose launcher is SIGKILLed after its first checkpoint (its ranks die
    with it), resumed with --nproc 2 --resume and stopped by a SIGTERM to its launcher after
    the next epoch's row (both ranks stop at the same batch, the launcher exits 143, rank 0
    names the checkpoint it saved there), then resumed again, ends with the scores of an
    uninterrupted 2-rank run: every epoch's row of metrics.jsonl equal, bit for bit."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["--nproc", "2"] + SHRUNK + ["--set", "trainer.params.epochs=5", "--set",
                                            "loaders.train.params.batch_size=8"]
        straight = os.path.join(tmp, "straight")
        p = run(binary, args + ["--output", straight], timeout=300)
        if p.returncode != 0:
            fail(f"the straight run: exit {p.returncode}: {p.stderr[-800:]}")
        expected, final_expected = epoch_rows(straight), closing(p.stdout)

        killed = os.path.join(tmp, "killed")
        proc, log, pids = start_launcher(binary, args + ["--output", killed], os.path.join(tmp, "log"))
        while not os.path.exists(os.path.join(killed, "last_checkpoint")) and proc.poll() is None:
            time.sleep(0.002)
        done = rows_written(killed)
        if proc.poll() is not None:
            fail(f"the run ended before its kill: exit {proc.returncode}")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        log.close()
        if not wait_gone(pids, 10):
            fail(f"ranks {pids} outlived their SIGKILLed launcher by 10 s")

        proc, log, pids = start_launcher(binary, args + ["--output", killed] + resume(killed),
                                         os.path.join(tmp, "log2"))
        while rows_written(killed) < done + 1 and proc.poll() is None:
            time.sleep(0.002)
        if proc.poll() is not None:
            fail(f"the resumed run ended before its SIGTERM: exit {proc.returncode}")
        proc.send_signal(signal.SIGTERM)
        err = proc.stderr.read()
        proc.wait()
        log.close()
        if proc.returncode != 143:
            fail(f"SIGTERM to the launcher: exit {proc.returncode}, expected 143: {err[-800:]}")
        for rank in (0, 1):
            if f"[rank {rank}] hookforge-run: SIGTERM: stopping after this batch" not in err:
                fail(f"rank {rank} did not get the SIGTERM: {err[-800:]}")
        # The ranks agree on a batch (distributed/agreement.hpp), and rank 0 saves it there; a
        # signal in an epoch's last batch or its validation stops them after the epoch.
        m = re.search(r"hookforge-run: stopped by SIGTERM (in epoch (\d+) after step \d+|after epoch (\d+)); "
                      r"--resume continues from (\S+)\n", err)
        if not m:
            fail(f"no 'stopped by SIGTERM in epoch N after step S' line: {err[-800:]}")
        where, checkpoint = m.group(1), m.group(4)
        rows = int(m.group(2)) - 1 if m.group(2) else int(m.group(3))
        if rows_written(killed) != rows or not wait_gone(pids, 10):
            fail(f"stopped {where}: {rows_written(killed)} rows, ranks {pids} gone: {wait_gone(pids, 0)}")
        resume_and_compare(binary, args + ["--output", killed], killed, expected, final_expected)
        print(f"launcher SIGKILLed after {done} epoch row(s) and a checkpoint; its ranks died with it; "
              f"--nproc 2 --resume, then SIGTERM to the launcher: both ranks stopped {where}, "
              f"exit 143, {os.path.basename(checkpoint)} saved; --nproc 2 --resume: the {len(expected)} "
              f"epochs' scores equal the straight 2-rank run's, bit for bit")


def cmd_nproc_kill(binary, seed):
    """(c) Rank 1 SIGKILLed in the middle of an epoch: the launcher stops rank 0 and exits 1
    within 60 s with a message naming rank 1 and the signal; no rank is left."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        args = ["--nproc", "2", "--set", "data.train.params.count=1024", "--set", "data.val.params.count=64",
                "--set", "trainer.params.epochs=20", "--set", "loaders.train.params.batch_size=8",
                "--output", out]
        proc, log, pids = start_launcher(binary, args, os.path.join(tmp, "log"))
        if len(pids) != 2:
            fail(f"expected 2 pids in the start line, got {pids}")
        while rows_written(out) < 1 and proc.poll() is None:
            time.sleep(0.005)
        time.sleep(rng.uniform(0.2, 0.8))  # into the second epoch (about 2 s long)
        if proc.poll() is not None:
            fail(f"the run ended before its kill: exit {proc.returncode}")
        rows_before = rows_written(out)
        killed_at = time.time()
        os.kill(pids[1], signal.SIGKILL)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            fail("the launcher did not exit within 60 s of rank 1's SIGKILL")
        took = time.time() - killed_at
        log.close()
        if proc.returncode == 0:
            fail("the launcher exited 0 after a rank was killed")
        message = [l for l in err.split("\n") if l.startswith("hookforge-run: rank ")]
        if not message or "rank 1" not in message[-1] or "SIGKILL" not in message[-1]:
            fail(f"no message naming rank 1 and SIGKILL: {err[-800:]}")
        if not wait_gone(pids, 5):
            fail(f"a rank is still running: {[p for p in pids if alive(p)]}")
        if rows_written(out) > rows_before + 1:
            fail("the run went on after the kill")
        print(f"rank 1 SIGKILLed {rows_before} epoch(s) in: launcher exit {proc.returncode} after {took:.1f} s: "
              f"{message[-1]}")
