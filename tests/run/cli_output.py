"""cli.py's tests of the output directory (overwrite, lock, paths): an earlier run's files are
never replaced unless told (refusals exit 2 changing no byte, --overwrite, runs/<config>-2);
one run per directory, with no stale lock after a SIGKILL; hooks' out_dirs are taken under
--output, and one leading out of it exits 2 unless --allow-outside-output."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

from cli_common import SHRUNK, epoch_rows, fail, rows_written, run, start_launcher


def snapshot(directory):
    """Every file under `directory` with its bytes, but the lock file (which names the pid of
    the last run that took it)."""
    files = {}
    for root, _, names in os.walk(directory):
        for name in names:
            if name == ".hookforge-run.lock":
                continue
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, directory)] = f.read()
    return files


def cmd_overwrite(binary, config):
    """A run never replaces or deletes an earlier run's files unless the command line says so.
    A fresh run into a run's directory, --resume where last_checkpoint is empty, garbled, names a
    file outside the directory, a symlink or nothing, or where checkpoints lie without it, and any
    run into a directory of files no run wrote (--overwrite too) exit 2 with a message naming the
    directory or file, changing no byte; --overwrite discards a run and starts anew; without
    --output, a second run writes to runs/<config>-2 and --resume continues the newest."""
    epochs = lambda n: ["--set", f"trainer.params.epochs={n}"]

    def refused(args, fragment, directory):
        before = snapshot(directory)
        p = run(binary, args)
        if p.returncode != 2 or fragment not in p.stderr:
            fail(f"{args[1:]}: exit {p.returncode}, expected 2 and ...{fragment}...: {p.stderr[-600:]}")
        if snapshot(directory) != before:
            fail(f"{args[1:]}: refused, but files in {directory} changed")

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        p = run(binary, [config, "--output", out] + epochs(3))
        if p.returncode != 0:
            fail(f"the first run: exit {p.returncode}: {p.stderr[-600:]}")
        refused([config, "--output", out] + epochs(3),
                f"the output directory '{out}' holds an earlier run ('epoch_2.pt', 'epoch_3.pt', "
                "'last_checkpoint' and 2 more): --resume continues it, --overwrite discards it", out)
        last = os.path.join(out, "last_checkpoint")
        with open(last) as f:
            named = f.read()
        outside = os.path.join(tmp, "elsewhere.pt")
        shutil.copy(os.path.join(out, "epoch_3.pt"), outside)
        os.symlink(outside, os.path.join(out, "link.pt"))
        cases = [("\n", "is empty: it should name the checkpoint to resume from"),
                 ("epoch_3.pt\x01\n", "should hold the name of a checkpoint file in"),
                 ("../elsewhere.pt\n", "should hold the name of a checkpoint file in"),
                 (outside + "\n", "should hold the name of a checkpoint file in"),
                 ("epoch_9.pt\n", "names 'epoch_9.pt', which does not exist"),
                 ("link.pt\n", "names 'link.pt', which is not a regular file")]
        for text, fragment in cases:
            with open(last, "w") as f:
                f.write(text)
            refused([config, "--output", out, "--resume"] + epochs(3), f"--resume: {last} {fragment}", out)
        os.remove(os.path.join(out, "link.pt"))
        os.remove(last)
        refused([config, "--output", out, "--resume"] + epochs(3),
                f"--resume: the output directory '{out}' holds checkpoints ('epoch_2.pt', 'epoch_3.pt') "
                "but no last_checkpoint", out)
        with open(last, "w") as f:
            f.write(named)
        p = run(binary, [config, "--output", out, "--overwrite"] + epochs(1))
        if p.returncode != 0:
            fail(f"--overwrite: exit {p.returncode}: {p.stderr[-600:]}")
        left = sorted(snapshot(out))
        if "epoch_3.pt" in left or len(epoch_rows(out)) != 1:
            fail(f"--overwrite kept the earlier run's files: {left}")
        refused([config, "--output", out, "--resume", "--overwrite"], "give one", out)

        foreign = os.path.join(tmp, "foreign")
        os.makedirs(foreign)
        with open(os.path.join(foreign, "notes.txt"), "w") as f:
            f.write("mine\n")
        for extra in ([], ["--overwrite"]):
            refused([config, "--output", foreign] + epochs(1) + extra,
                    f"the output directory '{foreign}' holds files that no hookforge-run wrote ('notes.txt'; "
                    "no .hookforge-run.lock)", foreign)
            if os.listdir(foreign) != ["notes.txt"]:
                fail(f"a refused run left files in a directory no run wrote: {os.listdir(foreign)}")

        cwd = os.path.join(tmp, "cwd")
        os.makedirs(cwd)
        stem = os.path.splitext(os.path.basename(config))[0]
        for n in (1, 2):
            p = run(binary, [config] + epochs(1), cwd=cwd)
            if p.returncode != 0:
                fail(f"run {n} without --output: exit {p.returncode}: {p.stderr[-600:]}")
        note = f"hookforge-run: runs/{stem} holds an earlier run; this one writes to runs/{stem}-2"
        if note not in p.stdout or not os.path.isdir(os.path.join(cwd, "runs", f"{stem}-2")):
            fail(f"a second run without --output: expected '{note}': {p.stdout[-600:]}")
        p = run(binary, [config, "--resume"] + epochs(2), cwd=cwd)
        if p.returncode != 0 or f"resumed from runs/{stem}-2/" not in p.stdout:
            fail(f"--resume without --output does not continue runs/{stem}-2: {p.stdout[-600:]} {p.stderr[-600:]}")
        print(f"{len(cases) + 5} refusals (exit 2, named, no byte changed); --overwrite starts anew; "
              f"runs/{stem}-2 for a second run without --output, which --resume continues")


def cmd_lock(binary, config, nproc):
    """One run per output directory. While a run trains, a second run into its directory (new or
    --resume) exits 2 naming the directory and the running run's pid, and changes nothing: the
    first run ends with each epoch's row once. A SIGKILLed run leaves no lock behind: --resume
    goes on at once. The first run is stopped (SIGSTOP) while the second ones start. With `nproc`,
    the same against a --nproc 2 run, whose launcher holds the lock for its ranks."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        first = subprocess.Popen([binary, config, "--output", out], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        while rows_written(out) < 2 and first.poll() is None:
            time.sleep(0.002)
        if first.poll() is not None:
            fail("the first run ended before it wrote two epochs' rows")
        # Stopped (SIGSTOP), it holds its lock and cannot finish while the second runs start,
        # however fast the machine trains; the SIGKILL below ends it wherever it stopped.
        first.send_signal(signal.SIGSTOP)
        for extra in ([], ["--resume"]):
            p = run(binary, [config, "--output", out] + extra)
            wanted = f"'{out}' is in use by another hookforge-run (pid {first.pid})"
            if p.returncode != 2 or wanted not in p.stderr:
                fail(f"a second run {extra}: exit {p.returncode}, expected 2 and ...{wanted}...: "
                     f"{p.stderr[-600:]}")
        first.send_signal(signal.SIGKILL)
        first.communicate()
        p = run(binary, [config, "--output", out, "--resume"])
        if p.returncode != 0 or "resumed from" not in p.stdout:
            fail(f"--resume after a SIGKILL: exit {p.returncode}: {p.stderr[-600:]}")
        epochs = [row["epoch"] for row in epoch_rows(out)]
        if epochs != list(range(1, len(epochs) + 1)):
            fail(f"metrics.jsonl's epochs are not each epoch once, in order: {epochs}")
        print(f"a second run into a running run's directory (new and --resume): exit 2 naming pid "
              f"{first.pid}; after its SIGKILL --resume went on at once; {len(epochs)} epochs, each once")
        if not nproc:
            return
        two = os.path.join(tmp, "two")
        args = ["--nproc", "2"] + SHRUNK + ["--set", "trainer.params.epochs=6", "--output", two]
        launcher, log, _ = start_launcher(binary, args, os.path.join(tmp, "log"))
        p = run(binary, SHRUNK + ["--set", "trainer.params.epochs=1", "--output", two])
        still_running = launcher.poll() is None
        launcher.wait(timeout=300)
        log.close()
        if not still_running:
            fail("the --nproc 2 run ended before the second run was refused: make it longer")
        wanted = f"'{two}' is in use by another hookforge-run (pid {launcher.pid})"
        if p.returncode != 2 or wanted not in p.stderr:
            fail(f"a run into a --nproc 2 run's directory: exit {p.returncode}, expected 2 and "
                 f"...{wanted}...: {p.stderr[-600:]}")
        if launcher.returncode != 0:
            fail(f"the --nproc 2 run: exit {launcher.returncode}: {launcher.stderr.read()[-600:]}")
        print(f"a run into a --nproc 2 run's directory: exit 2 naming the launcher (pid {launcher.pid}); "
              f"its ranks ran under the launcher's lock")


def cmd_paths(binary, config):
    """Where a run's files go: a relative out_dir is under --output (not the current directory),
    and --resume finds the checkpoints there; an out_dir through a symlink planted in the output
    directory that leads out of it is refused at --check, exit 2, nothing written out there;
    --allow-outside-output lets an absolute one be written."""
    def hooks(saver_dir, logger_dir="logs"):
        return ["--set", "trainer.params.hooks=[{_target: LossLogger, params: {console: false, "
                f"out_dir: '{logger_dir}'}}}}, {{_target: CheckpointSaver, params: {{out_dir: '{saver_dir}'}}}}]"]
    epochs = lambda n: ["--set", f"trainer.params.epochs={n}"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        p = run(binary, [config, "--output", out] + hooks("ckpt") + epochs(2), cwd=tmp)
        if p.returncode != 0:
            fail(f"a run with out_dirs under --output: exit {p.returncode}: {p.stderr[-600:]}")
        for f in ("ckpt/epoch_2.pt", "ckpt/last_checkpoint", "logs/metrics.csv"):
            if not os.path.isfile(os.path.join(out, f)):
                fail(f"out_dir relative to --output: no {f} in {out}: {sorted(os.listdir(out))}")
        if sorted(os.listdir(tmp)) != ["out"]:
            fail(f"a relative out_dir wrote into the current directory: {sorted(os.listdir(tmp))}")
        p = run(binary, [config, "--output", out, "--resume"] + hooks("ckpt") + epochs(3), cwd=tmp)
        if p.returncode != 0 or "resumed from" not in p.stdout or "(2 epochs done)" not in p.stdout:
            fail(f"--resume with the checkpoints in out_dir ckpt: exit {p.returncode}: "
                 f"{p.stdout[-400:]} {p.stderr[-400:]}")
        if not os.path.isfile(os.path.join(out, "ckpt", "epoch_3.pt")):
            fail("--resume did not go on writing into ckpt/")
        print("a relative out_dir is under --output; --resume finds its checkpoints")

        planted = os.path.join(tmp, "planted")
        elsewhere = os.path.join(tmp, "elsewhere")
        os.makedirs(planted)
        os.makedirs(elsewhere)
        os.symlink(elsewhere, os.path.join(planted, "link"))
        for args, key in ((hooks("link/ckpt"), "hooks[1].params.out_dir"),
                          (hooks("ckpt", "../logs"), "hooks[0].params.out_dir"),
                          (hooks(elsewhere), "hooks[1].params.out_dir")):
            for check in ([], ["--check"]):
                p = run(binary, [config, "--output", planted] + args + epochs(1) + check, cwd=tmp)
                if (p.returncode != 2 or f"{key}: expected a path inside the run's output directory"
                        not in p.stderr or "outside it" not in p.stderr):
                    fail(f"{args[1]}: exit {p.returncode}, expected 2 at {key}: {p.stderr[-600:]}")
        if os.listdir(elsewhere) or sorted(os.listdir(planted)) != ["link"]:
            fail(f"a refused run wrote: {os.listdir(elsewhere)}, {os.listdir(planted)}")
        print("an out_dir leading out of --output (a symlink, '..', an absolute path) exits 2")

        allowed = os.path.join(tmp, "allowed")
        p = run(binary, [config, "--output", os.path.join(tmp, "out3"), "--allow-outside-output"]
                + hooks(allowed) + epochs(1), cwd=tmp)
        if p.returncode != 0 or not os.path.isfile(os.path.join(allowed, "epoch_1.pt")):
            fail(f"--allow-outside-output: exit {p.returncode}: {p.stderr[-600:]}")
        print("--allow-outside-output writes where the config says")
