#!/usr/bin/env python3
"""hookforge-run's command line, tested from outside: exit codes, messages, files.

  cli.py configs  BIN NAME=EXAMPLE_BIN,... CONFIG_DIR
                                               every config passes --check (those naming an
                                               example's classes with it), creating nothing
  cli.py bad      BIN RUN_BAD_DIR CONFIG_BAD_DIR
                                               malformed configs: exit 2, FILE:LINE: message, no file
  cli.py limits   BIN                          a 10 MB file, truncations of the default: never a crash
  cli.py train    BIN CONFIG [--set K=V]...    a short run: exit 0, a closing line, checkpoints
  cli.py default  BIN FILE                     --print-default is FILE, byte for byte
  cli.py strict   BIN CONFIG WARNING ERROR     a warning (holding WARNING); with --strict exit 2 (ERROR)
  cli.py usage    BIN                          command-line mistakes: exit 2, nothing created
  cli.py unwritable BIN CONFIG                 an output directory that cannot be made: exit 1
  cli.py full-disk BIN CONFIG                  the disk fills during a checkpoint: exit 1 naming it, the
                                               last checkpoint kept, --resume ends as a straight run
  cli.py kill     BIN CONFIG [SEED]            SIGKILL at random moments, --resume: same metrics
  cli.py signals  BIN CONFIG [SEED]            SIGTERM and SIGINT at random moments: exit 143 / 130 after
                                               a saved epoch, no temporary file; a second signal stops at
                                               once; --resume: same metrics
  cli.py longer   BIN                          a run resumed with more epochs: the config's cosine T_max
                                               applies from there, and the run says so
  cli.py mid-epoch BIN CONFIG                  checkpoints between batches (ImageFolder, augmentations,
                                               2 workers): SIGKILL and SIGTERM in the middle of an
                                               epoch, --resume: the straight run's metrics, bit for bit
  cli.py nproc    BIN                          --nproc 2 on the shrunk default: the 1-rank run's scores,
                                               files by rank 0 only; config errors exit 2, start nothing
  cli.py nproc-resume BIN                      a 2-rank run killed (the launcher, SIGKILL), resumed and
                                               stopped (the launcher, SIGTERM), resumed: the uninterrupted
                                               2-rank run's scores, bit for bit
  cli.py nproc-kill BIN [SEED]                 a rank SIGKILLed mid-epoch: the launcher exits 1 within
                                               60 s naming it, no rank left
  cli.py overwrite BIN CONFIG                  an earlier run's files are never replaced unless told:
                                               refusals exit 2 naming the file, --overwrite, runs/<config>-2
  cli.py lock     BIN CONFIG [nproc]           a second run into a running run's directory exits 2
                                               naming its pid; a killed run leaves no stale lock
  cli.py top-k    BIN                          save_top_k 2 from the command line: 2 files named with
                                               their scores; export RUN takes the best of them
  cli.py max-steps BIN                         max_steps from the command line ends the epoch it is
                                               reached in, which validates; -3 exits 2 naming it
  cli.py test-stage BIN                        a test section scores the best checkpoint after
                                               training and with --test-only --resume; mistakes exit 2
  cli.py paths    BIN CONFIG                   a hook's out_dir is taken under --output; one leading
                                               out of it (a symlink too) exits 2 unless
                                               --allow-outside-output; --resume finds the checkpoints
  cli.py two-hosts BIN                         ranks in two network namespaces joined by a veth pair:
                                               the 1-host 2-rank scores bit for bit; the link cut mid-
                                               run ends both within the timeout naming the peer, and
                                               --resume ends as a straight run (exit 77: no namespaces)
Each prints what it checked and exits 1 on the first failure.
"""
import json
import math
import os
import struct
import zlib
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(binary, args, cwd=None, timeout=600):
    return subprocess.run([binary] + args, cwd=cwd, capture_output=True, text=True, errors="replace",
                          timeout=timeout)


def nothing_in(directory):
    return not os.listdir(directory)


def expect_config_error(binary, path, line, fragment, args=()):
    """hookforge-run on `path` in an empty directory: exit 2, one line FILE:LINE:..., no file."""
    with tempfile.TemporaryDirectory() as cwd:
        p = run(binary, [path, *args], cwd=cwd)
        where = f"{os.path.basename(path)}: "
        if p.returncode != 2:
            fail(where + f"exit code {p.returncode}, expected 2; stderr: {p.stderr[-500:]}")
        lines = p.stderr.strip().split("\n")
        if len(lines) != 1:
            fail(where + f"expected one line on stderr, got {len(lines)}: {p.stderr[-500:]}")
        if line is not None and not lines[0].startswith(f"{path}:{line}:"):
            fail(where + f"expected the message to start with {path}:{line}:, got {lines[0][:300]}")
        if line is None and not re.match(re.escape(path) + r":\d+:\d+: ", lines[0]):
            fail(where + f"expected FILE:LINE:COL: at the start, got {lines[0][:300]}")
        if fragment and fragment not in lines[0]:
            fail(where + f"expected '{fragment}' in {lines[0][:400]}")
        if not nothing_in(cwd):
            fail(where + f"files were created: {os.listdir(cwd)}")


def read_expected(directory):
    out = []
    with open(os.path.join(directory, "expected.txt")) as f:
        for text in f:
            if not text.strip() or text.startswith("#"):
                continue
            name, line, fragment = (part.strip() for part in text.split("|", 2))
            out.append((name, int(line), fragment))
    return out


# The malformed configs of tests/config/bad whose mistake the document layer finds, wherever
# the config is used: hookforge-run reports them at the same line with the same message.
DOCUMENT_LEVEL = {
    "alias_bomb.yaml", "bad_indentation.yaml", "bad_path_syntax.yaml", "binary_garbage.bin",
    "cyclic_interpolation.yaml", "dangling_interpolation.yaml", "dangling_ref.yaml", "deep_nesting.yaml",
    "duplicate_key.yaml", "empty.yaml", "invalid_flow.yaml", "non_scalar_key.yaml", "path_through_ref.yaml",
    "ref_inside_text.yaml", "self_alias.yaml", "top_level_list.yaml", "truncated.yaml", "two_documents.yaml",
    "unterminated_interpolation.yaml", "interpolation_bomb.yaml",
}


def cmd_bad(binary, run_bad, config_bad):
    listed = read_expected(run_bad)
    files = sorted(f for f in os.listdir(run_bad) if f != "expected.txt")
    if sorted(name for name, _, _ in listed) != files:
        fail(f"{run_bad}/expected.txt does not list exactly the files there")
    for name, line, fragment in listed:
        expect_config_error(binary, os.path.join(run_bad, name), line, fragment)
    print(f"{len(listed)} malformed run configs: exit 2, located message, nothing created")

    reused = 0
    for name, line, fragment in read_expected(config_bad):
        path = os.path.join(config_bad, name)
        if name in DOCUMENT_LEVEL:
            expect_config_error(binary, path, line, fragment)
        else:
            # A config of the test domain: no trainer, or a mistake the run finds first; still
            # one located config error and no file.
            expect_config_error(binary, path, None, None)
        reused += 1
    print(f"{reused} malformed configs of tests/config/bad: exit 2, nothing created "
          f"({len(DOCUMENT_LEVEL)} at their expected line and message)")


def cmd_configs(binary, examples, config_dir):
    """`examples`: NAME=PROGRAM pairs, comma-separated: the configs that name classes of an
    example's own, with the example that registers them ("-": not built, skipped)."""
    programs = dict(pair.split("=", 1) for pair in examples.split(",") if pair)
    names = sorted(f for f in os.listdir(config_dir) if f.endswith(".yaml"))
    if not names:
        fail("no configs")
    for name in names:
        program = programs.get(name, binary)
        if program == "-":
            print(f"{name}: skipped (its example is not built)")
            continue
        with tempfile.TemporaryDirectory() as cwd:
            p = run(program, [os.path.join(config_dir, name), "--check"], cwd=cwd)
            if p.returncode != 0:
                fail(f"{name} --check: exit code {p.returncode}: {p.stderr[-800:]}")
            if "warnings: none" not in p.stdout:
                fail(f"{name} --check: warnings: {p.stdout[-800:]}")
            if "Trainer\n" not in p.stdout or "[runtime]" not in p.stdout:
                fail(f"{name} --check: no binding table: {p.stdout[-800:]}")
            if not nothing_in(cwd):
                fail(f"{name} --check created {os.listdir(cwd)}")
        print(f"{name}: --check builds it, no warnings, nothing created")
    # hookforge-run itself does not know the examples' classes.
    unknown = {"user_hook.yaml": "expected a registered hook, got 'GradNorm'",
               "custom_runner.yaml": "expected a registered training_runner, got 'NoisyInputRunner'"}
    for name, says in unknown.items():
        with tempfile.TemporaryDirectory() as cwd:
            p = run(binary, [os.path.join(config_dir, name), "--check"], cwd=cwd)
            if p.returncode != 2 or says not in p.stderr:
                fail(f"hookforge-run on {name}: exit {p.returncode}: {p.stderr[-500:]}")
        print(f"{name}: unknown to hookforge-run (exit 2: {says}), built by its example")


def cmd_limits(binary):
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "big.yaml")
        with open(big, "w") as f:
            f.write("vars:\n")
            line = "  k{:07d}: " + "x" * 80 + "\n"
            i = 0
            while f.tell() < 10 * 1024 * 1024:
                f.write(line.format(i))
                i += 1
        expect_config_error(binary, big, 1, "expected a config of at most 4194304 bytes, got a larger file")
        deep = os.path.join(tmp, "deep.yaml")
        with open(deep, "w") as f:
            f.write("vars: " + "[" * 5000 + "]" * 5000 + "\n")
        expect_config_error(binary, deep, 1, "expected YAML nested fewer levels deep, got YAML nested deeper than")
        print("a 10 MB config and 5000 nested lists: exit 2, located message, nothing created")

        default = run(binary, ["--print-default"]).stdout.encode()
        counts = {0: 0, 2: 0}
        cut = os.path.join(tmp, "cut.yaml")
        for n in range(0, len(default), 61):  # a prime stride: cuts land mid-key, mid-value and mid-line
            with open(cut, "wb") as f:
                f.write(default[:n])
            with tempfile.TemporaryDirectory() as cwd:
                p = run(binary, [cut, "--check"], cwd=cwd)
                if p.returncode not in (0, 2):
                    fail(f"the default cut at byte {n}: exit code {p.returncode}: {p.stderr[-500:]}")
                if p.returncode == 2 and not p.stderr.startswith(cut + ":"):
                    fail(f"the default cut at byte {n}: message without its file: {p.stderr[-300:]}")
                if not nothing_in(cwd):
                    fail(f"the default cut at byte {n}: files created")
                counts[p.returncode] += 1
        print(f"{sum(counts.values())} truncations of the default config: {counts[2]} config errors, "
              f"{counts[0]} still valid, no crash")


def cmd_train(binary, config, sets):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        args = [] if config == "-" else [config]
        p = run(binary, args + ["--output", out] + [a for s in sets for a in ("--set", s)])
        if p.returncode != 0:
            fail(f"exit code {p.returncode}: {p.stdout[-1500:]}\n{p.stderr[-1500:]}")
        final = [l for l in p.stdout.split("\n") if l.startswith("final: ")]
        if len(final) != 1:
            fail(f"no closing line: {p.stdout[-1500:]}")
        for name in ("last_checkpoint", "metrics.csv"):
            if not os.path.exists(os.path.join(out, name)):
                fail(f"no {name} in the output directory: {os.listdir(out)}")
        print(p.stdout[-2000:])
        print(f"trained: {final[0]}")


def cmd_default(binary, path):
    p = subprocess.run([binary, "--print-default"], capture_output=True)
    with open(path, "rb") as f:
        if p.returncode != 0 or p.stdout != f.read():
            fail("--print-default differs from " + path)
    print("--print-default is configs/default.yaml, byte for byte")


def cmd_strict(binary, config, warning, error):
    with tempfile.TemporaryDirectory() as cwd:
        p = run(binary, [config, "--check"], cwd=cwd)
        if p.returncode != 0 or "warnings: 1" not in p.stdout or warning not in p.stdout:
            fail(f"--check: exit {p.returncode}, expected a warning with '{warning}': {p.stdout[-800:]} "
                 f"{p.stderr[-400:]}")
        expect_config_error(binary, config, None, error, args=["--strict"])
    print(f"{os.path.basename(config)}: a warning; with --strict exit 2")


def cmd_usage(binary):
    checks = [
        (["--bogus"], "unknown option '--bogus'"),
        (["--set"], "--set needs a value"),
        (["--device", "gpu"], "--device must be cpu, cuda or auto, got 'gpu'"),
        (["--resume", "/nonexistent/epoch_3.pt"], "--resume: no checkpoint file at '/nonexistent/epoch_3.pt'"),
        (["a.yaml", "b.yaml"], "a second config 'b.yaml'"),
        (["--set", "trainer.params.epochs=ten"], "<--set trainer.params.epochs=ten>:1:23: trainer.params.epochs: "
                                                 "expected an integer"),
        (["--set", "nosuch.key=1"], "<--set nosuch.key=1>:1:1: nosuch.key: expected a key of <document>"),
    ]
    for args, fragment in checks:
        with tempfile.TemporaryDirectory() as cwd:
            p = run(binary, args + ["--output", "out"], cwd=cwd)
            if p.returncode != 2 or fragment not in p.stderr:
                fail(f"{args}: exit {p.returncode}, expected 2 with '{fragment}': {p.stderr[-400:]}")
            if not nothing_in(cwd):
                fail(f"{args}: files created")
    # --device cuda: exit 2 where CUDA is missing; a GPU machine builds the run.
    with tempfile.TemporaryDirectory() as cwd:
        p = run(binary, ["--device", "cuda", "--check"], cwd=cwd)
        if p.returncode == 2:
            if "CUDA is not available" not in p.stderr:
                fail(f"--device cuda: unclear message: {p.stderr}")
        elif p.returncode != 0 or "device cuda" not in p.stdout:
            fail(f"--device cuda: exit {p.returncode}: {p.stdout[-300:]} {p.stderr[-300:]}")
    help_text = run(binary, ["--help"])
    if help_text.returncode != 0 or "usage: hookforge-run" not in help_text.stdout:
        fail("--help")
    listing = run(binary, ["--list"])
    if listing.returncode != 0 or "  GradientClip" not in listing.stdout or "max_norm: a number = 0" not in listing.stdout:
        fail("--list: " + listing.stdout[:500])
    print(f"{len(checks) + 1} command-line mistakes: exit 2, nothing created; --help and --list work")


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



# The default config, shrunk for tests: 256 training and 64 validation images.
SHRUNK = ["--set", "data.train.params.count=256", "--set", "data.val.params.count=64"]


def closing(stdout):
    lines = [l for l in stdout.split("\n") if "final: " in l]
    if len(lines) != 1:
        fail(f"expected one closing line, got {len(lines)}: {stdout[-1500:]}")
    return lines[0]


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


def pids_of(start_line):
    return [int(x) for x in re.findall(r"rank \d+: pid (\d+)", start_line)]


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


class TwoHosts:
    """Two network namespaces joined by a veth pair, as two machines: host 0 at 10.231.N.1,
    host 1 at 10.231.N.2 (N from the pid; addresses inside the namespaces only). Removed on exit."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.names = [f"hf{tag}h0", f"hf{tag}h1"]
        self.links = [f"hf{tag}v0", f"hf{tag}v1"]
        net = 1 + os.getpid() % 250
        self.addresses = [f"10.231.{net}.1", f"10.231.{net}.2"]

    def ip(self, *args):
        p = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
        if p.returncode != 0:
            raise OSError(f"ip {' '.join(args)}: {p.stderr.strip()}")

    def __enter__(self):
        try:
            for n in self.names:
                self.ip("netns", "add", n)
            self.ip("link", "add", self.links[0], "type", "veth", "peer", "name", self.links[1])
            for n, link, address in zip(self.names, self.links, self.addresses):
                self.ip("link", "set", link, "netns", n)
                self.ip("-n", n, "addr", "add", address + "/24", "dev", link)
                self.ip("-n", n, "link", "set", link, "up")
                self.ip("-n", n, "link", "set", "lo", "up")
        except (OSError, FileNotFoundError) as e:
            self.__exit__(None, None, None)
            print(f"SKIP: cannot make two network namespaces here ({e}); two-host run not tested")
            sys.exit(77)
        return self

    def __exit__(self, *_):
        for n in self.names:
            subprocess.run(["ip", "netns", "del", n], capture_output=True)

    def link(self, up):
        self.ip("-n", self.names[0], "link", "set", self.links[0], "up" if up else "down")

    def start(self, binary, args, port, logs):
        """Rank r on host r: WORLD_SIZE=2, MASTER_ADDR host 0, Gloo on the veth."""
        procs = []
        for rank in (0, 1):
            env = {"WORLD_SIZE": "2", "RANK": str(rank), "LOCAL_RANK": "0", "MASTER_ADDR": self.addresses[0],
                   "MASTER_PORT": str(port), "GLOO_SOCKET_IFNAME": self.links[rank], "OMP_NUM_THREADS": "1"}
            command = ["ip", "netns", "exec", self.names[rank], "env"] + [f"{k}={v}" for k, v in env.items()]
            log = open(f"{logs}.rank{rank}", "w+")
            procs.append((subprocess.Popen(command + [binary] + args, stdout=log, stderr=subprocess.STDOUT), log))
        return procs


def finish(procs, timeout):
    """Wait for both ranks (killing them past `timeout` s): their exit codes and output."""
    codes, texts = [], []
    deadline = time.time() + timeout
    for proc, log in procs:
        try:
            proc.wait(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.seek(0)
        codes.append(proc.returncode)
        texts.append(log.read())
        log.close()
    return codes, texts


def cmd_two_hosts(binary):
    """(e) Two hosts for real: one rank in each of two network namespaces, over a veth pair.
    Their run equals the 1-host 2-rank run (--nproc 2) bit for bit; the link cut in the middle
    of a run (after its first checkpoint) ends both ranks within distributed.timeout (10 s) plus
    a margin, exit 1, each naming the peer and its address; with the link back, --resume on both
    ends with the straight run's scores, bit for bit."""
    args = SHRUNK + ["--set", "trainer.params.epochs=4", "--set", "loaders.train.params.batch_size=8",
                     "--set", "distributed={timeout: 10}"]
    port = 20000 + os.getpid() % 20000
    with tempfile.TemporaryDirectory() as tmp, TwoHosts() as hosts:
        straight = os.path.join(tmp, "straight")
        p = run(binary, ["--nproc", "2"] + args + ["--output", straight], timeout=300)
        if p.returncode != 0:
            fail(f"the 1-host 2-rank run: exit {p.returncode}: {p.stderr[-800:]}")
        expected = epoch_rows(straight)
        scores = lambda text: closing(text).split("final: ", 1)[1].rsplit("|", 1)[0]  # not the time
        final_expected = scores(p.stdout)

        # Both hosts see one file system, as machines with a shared work directory do.
        two = os.path.join(tmp, "two")
        codes, texts = finish(hosts.start(binary, args + ["--output", two], port, os.path.join(tmp, "two")), 300)
        if codes != [0, 0]:
            fail(f"the 2-host run: exit codes {codes}: {texts[0][-800:]}\n{texts[1][-800:]}")
        if epoch_rows(two) != expected or scores(texts[0]) != final_expected:
            fail(f"the 2-host run's scores differ from the 1-host 2-rank run's:\n{epoch_rows(two)}\n{expected}")
        print(f"2 hosts ({hosts.addresses[0]}, {hosts.addresses[1]}), one rank each: the 1-host 2-rank "
              f"scores, bit for bit: {final_expected}")

        cut = os.path.join(tmp, "cut")
        procs = hosts.start(binary, args + ["--output", cut], port + 1, os.path.join(tmp, "cut"))
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(cut, "last_checkpoint")) and time.time() < deadline:
            time.sleep(0.005)
        if any(proc.poll() is not None for proc, _ in procs):
            fail("a rank ended before the link was cut")
        hosts.link(False)
        cut_at = time.time()
        codes, texts = finish(procs, 60)
        took = time.time() - cut_at
        hosts.link(True)
        if codes != [1, 1]:
            fail(f"the link cut: exit codes {codes}, expected [1, 1]: {texts[0][-600:]}\n{texts[1][-600:]}")
        if took > 10 + 15:
            fail(f"the link cut: the ranks took {took:.1f} s to end, more than the 10 s timeout and a margin")
        for rank in (0, 1):
            peer = 1 - rank
            said = f"failed on rank {rank} of 2 (gloo) with rank {peer} at {hosts.addresses[peer]}"
            if said not in texts[rank]:
                fail(f"rank {rank} after the cut did not say '{said}': {texts[rank][-800:]}")
        line = [l for l in texts[0].split("\n") if "failed on rank 0" in l][0]
        print(f"the link cut after the first checkpoint: both ranks exit 1 within {took:.1f} s: {line[:160]}...")

        codes, texts = finish(hosts.start(binary, args + ["--output", cut, "--resume"], port + 2,
                                          os.path.join(tmp, "resumed")), 300)
        if codes != [0, 0] or "resumed from" not in texts[0]:
            fail(f"--resume after the cut: exit codes {codes}: {texts[0][-800:]}\n{texts[1][-800:]}")
        if epoch_rows(cut) != expected or scores(texts[0]) != final_expected:
            fail(f"the resumed 2-host run's scores differ from the straight run's:\n{epoch_rows(cut)}\n{expected}")
        print("--resume on both hosts with the link back: the straight run's scores, bit for bit")


def cmd_top_k(binary):
    """CheckpointSaver's save_top_k from a config: the k best files, named with their scores,
    and `export RUN` takes the best of them (the bookkeeping's), not the newest."""
    saver = "trainer.params.hooks.3.params"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        p = run(binary, ["--output", out, "--set", "trainer.params.epochs=4", "--set",
                         "data.train.params.count=256", "--set", f"{saver}.save_top_k=2", "--set",
                         f"{saver}.rule=less", "--set",  # the worst PSNR "best": the first epochs stay
                         f"{saver}.best_filename_tmpl=top_{{metric}}_{{score:.6f}}_e{{epoch}}.pt"])
        if p.returncode != 0:
            fail(f"exit code {p.returncode}: {p.stdout[-1500:]}\n{p.stderr[-1500:]}")
        top = sorted(f for f in os.listdir(out) if f.startswith("top_psnr_"))
        if len(top) != 2:
            fail(f"save_top_k 2 should leave 2 files top_psnr_*: {sorted(os.listdir(out))}")
        best = min(top, key=lambda f: float(f.split("_")[2]))  # rule less
        newest = max(top, key=lambda f: os.path.getmtime(os.path.join(out, f)))
        p = run(binary, ["export", out])
        if p.returncode != 0 or f"'{os.path.join(out, best)}'" not in p.stdout:
            fail(f"export {out} should take {best} (the best of {top}): {p.stdout}{p.stderr}")
        print(f"save_top_k 2 by a PSNR ruled 'less' over 4 epochs kept {', '.join(top)}; export took "
              f"{best}" + ("" if best == newest else f", not the newer {newest}"))


def cmd_max_steps(binary):
    """trainer.params.max_steps from the command line: 24 updates of 16-batch epochs end the
    second epoch after its 8th batch, which validates; a value below -1 exits 2 naming the key."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        p = run(binary, ["--output", out, "--set", "trainer.params.epochs=5", "--set",
                         "data.train.params.count=256", "--set", "trainer.params.max_steps=24"])
        if p.returncode != 0:
            fail(f"exit code {p.returncode}: {p.stdout[-1500:]}\n{p.stderr[-1500:]}")
        final = closing(p.stdout)
        if "| 2 epochs (stopped: max_steps)" not in final:
            fail(f"24 updates of 16 an epoch should end epoch 2 for max_steps: {final}")
        rows = epoch_rows(out)
        if len(rows) != 2 or not any(k.startswith("val_") for k in rows[-1]):
            fail(f"expected 2 epoch rows, the shortened one validated: {rows}")
        p = run(binary, ["--output", os.path.join(tmp, "bad"), "--set", "trainer.params.max_steps=-3"])
        if p.returncode != 2 or "max_steps" not in p.stderr or "-1 (no limit)" not in p.stderr:
            fail(f"max_steps -3 should exit 2 naming the key and what it takes: {p.returncode} {p.stderr}")
        print(f"max_steps 24: {final}; max_steps -3: {p.stderr.strip()}")


def cmd_test_stage(binary):
    """The config's test section: after training, the best checkpoint scored on its loader,
    printed and in test_metrics.json; --test-only --resume scores it again, training nothing;
    the mistakes (no --resume, no section, a bad checkpoint choice) exit 2 naming them."""
    test = 'test={loader: "${ref:loaders.val}"}'
    small = ["--set", "trainer.params.epochs=2", "--set", "data.train.params.count=256"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        p = run(binary, ["--output", out, *small, "--set", test])
        if p.returncode != 0:
            fail(f"exit code {p.returncode}: {p.stdout[-1500:]}\n{p.stderr[-1500:]}")
        lines = [l for l in p.stdout.split("\n") if l.startswith("test: ")]
        if len(lines) != 1 or "| best_psnr_epoch_" not in lines[0]:
            fail(f"expected one line 'test: ... | best_psnr_epoch_N.pt': {p.stdout[-1500:]}")
        with open(os.path.join(out, "test_metrics.json")) as f:
            first = json.load(f)
        if not first["checkpoint"].startswith("best_psnr_epoch_") or "psnr" not in first["scores"]:
            fail(f"test_metrics.json should name the best checkpoint and hold its PSNR: {first}")
        if not lines[0].endswith(first["checkpoint"]):
            fail(f"the test line and test_metrics.json name different files: {lines[0]} {first}")

        p = run(binary, ["--output", out, *small, "--set", test, "--resume", "--test-only"])
        if p.returncode != 0 or "final: " in p.stdout:
            fail(f"--test-only should test without training: {p.returncode} {p.stdout[-1500:]}{p.stderr}")
        with open(os.path.join(out, "test_metrics.json")) as f:
            again = json.load(f)
        if again != first:
            fail(f"--test-only on the same checkpoint should score the same: {first} vs {again}")

        empty = os.path.join(tmp, "empty")
        mistakes = [(["--test-only", "--set", test], "--test-only tests a run that trained"),
                    (["--output", empty, "--resume", "--test-only", "--set", test], "holds no run to test"),
                    (["--output", out, "--resume", "--test-only"], "a test section for --test-only"),
                    (["--output", out, "--set", 'test={loader: "${ref:loaders.val}", checkpoint: newest}'],
                     "test.checkpoint")]
        for args, says in mistakes:
            p = run(binary, args)
            if p.returncode != 2 or says not in p.stderr:
                fail(f"{' '.join(args)} should exit 2 saying '{says}': {p.returncode} {p.stderr[-800:]}")
        if os.path.exists(empty):
            fail(f"--test-only on a directory without a run created it: {empty}")
        print(f"{lines[0]}; --test-only scored {again['checkpoint']} the same; {len(mistakes)} mistakes exit 2")


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    command, binary = argv[1], os.path.abspath(argv[2])
    rest = [os.path.abspath(a) if os.path.exists(a) else a for a in argv[3:]]
    if command == "configs":
        cmd_configs(binary, rest[0], rest[1])
    elif command == "bad":
        cmd_bad(binary, rest[0], rest[1])
    elif command == "limits":
        cmd_limits(binary)
    elif command == "train":
        sets = [rest[i + 1] for i in range(1, len(rest) - 1, 2) if rest[i] == "--set"]
        cmd_train(binary, rest[0], sets)
    elif command == "default":
        cmd_default(binary, rest[0])
    elif command == "strict":
        cmd_strict(binary, rest[0], rest[1], rest[2])
    elif command == "usage":
        cmd_usage(binary)
    elif command == "unwritable":
        cmd_unwritable(binary, rest[0])
    elif command == "full-disk":
        cmd_full_disk(binary, rest[0])
    elif command == "nproc":
        cmd_nproc(binary)
    elif command == "nproc-resume":
        cmd_nproc_resume(binary)
    elif command == "nproc-kill":
        cmd_nproc_kill(binary, int(rest[0]) if rest else 0)
    elif command == "overwrite":
        cmd_overwrite(binary, rest[0])
    elif command == "two-hosts":
        cmd_two_hosts(binary)
    elif command == "paths":
        cmd_paths(binary, rest[0])
    elif command == "top-k":
        cmd_top_k(binary)
    elif command == "max-steps":
        cmd_max_steps(binary)
    elif command == "test-stage":
        cmd_test_stage(binary)
    elif command == "lock":
        cmd_lock(binary, rest[0], len(rest) > 1 and rest[1] == "nproc")
    elif command == "signals":
        cmd_signals(binary, rest[0], int(rest[1]) if len(rest) > 1 else 0)
    elif command == "longer":
        cmd_longer(binary)
    elif command == "mid-epoch":
        cmd_mid_epoch(binary, rest[0])
    elif command == "kill":
        cmd_kill(binary, rest[0], int(rest[1]) if len(rest) > 1 else 0)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
