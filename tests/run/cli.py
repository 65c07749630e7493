#!/usr/bin/env python3
"""hookforge-run's command line, tested from outside: exit codes, messages, files.

  cli.py configs  BIN EXAMPLE_BIN CONFIG_DIR   every config passes --check, creating nothing
  cli.py bad      BIN RUN_BAD_DIR CONFIG_BAD_DIR
                                               malformed configs: exit 2, FILE:LINE: message, no file
  cli.py limits   BIN                          a 10 MB file, truncations of the default: never a crash
  cli.py train    BIN CONFIG [--set K=V]...    a short run: exit 0, a closing line, checkpoints
  cli.py default  BIN FILE                     --print-default is FILE, byte for byte
  cli.py strict   BIN CONFIG                   a warning; with --strict exit 2
  cli.py usage    BIN                          command-line mistakes: exit 2, nothing created
  cli.py unwritable BIN CONFIG                 an output directory that cannot be made: exit 1
  cli.py kill     BIN CONFIG [SEED]            SIGKILL at random moments, --resume: same metrics
Each prints what it checked and exits 1 on the first failure.
"""
import json
import os
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
    "unterminated_interpolation.yaml",
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


def cmd_configs(binary, example_binary, config_dir):
    names = sorted(f for f in os.listdir(config_dir) if f.endswith(".yaml"))
    if not names:
        fail("no configs")
    for name in names:
        program = example_binary if name == "user_hook.yaml" else binary
        if program == "-":
            print(f"{name}: skipped (the user_hook_run example is not built)")
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
    # hookforge-run itself does not know the user's hook.
    with tempfile.TemporaryDirectory() as cwd:
        path = os.path.join(config_dir, "user_hook.yaml")
        p = run(binary, [path, "--check"], cwd=cwd)
        if p.returncode != 2 or "expected a registered hook, got 'GradNorm'" not in p.stderr:
            fail(f"hookforge-run on user_hook.yaml: exit {p.returncode}: {p.stderr[-500:]}")
    print("user_hook.yaml: unknown to hookforge-run (exit 2), built by the example that registers GradNorm")


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
        expect_config_error(binary, deep, 1, None)
        print("a 10 MB config and 5000 nested lists: exit 2, located message, nothing created")

        default = run(binary, ["--print-default"]).stdout.encode()
        counts = {0: 0, 2: 0}
        cut = os.path.join(tmp, "cut.yaml")
        for n in range(0, len(default), 23):
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


def cmd_strict(binary, config):
    with tempfile.TemporaryDirectory() as cwd:
        p = run(binary, [config, "--check"], cwd=cwd)
        if p.returncode != 0 or "warnings: 1" not in p.stdout or "exposes no matching HookPoint" not in p.stdout:
            fail(f"--check: exit {p.returncode}, expected a warning: {p.stdout[-800:]} {p.stderr[-400:]}")
        expect_config_error(binary, config, None, "expected a hook that binds to points of TrainingEpochRunner",
                            args=["--strict"])
    print("a hook bound to no point of its component: a warning; with --strict exit 2")


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


def cmd_kill(binary, config, seed):
    """SIGKILL a run at random moments and --resume it until it ends; its epochs' scores (all of
    metrics.jsonl but the timings) and its closing line must equal an uninterrupted run's.
    The first kill comes at a random time (often before the first checkpoint); the others a
    random 0-20 ms after the row of a random epoch appears, which LossLogger writes just
    before CheckpointSaver writes that epoch's checkpoint: most land during the write."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        straight = os.path.join(tmp, "straight")
        p = run(binary, [config, "--output", straight])
        if p.returncode != 0:
            fail(f"the straight run: exit {p.returncode}: {p.stderr[-800:]}")
        expected = epoch_rows(straight)
        final_expected = [l for l in p.stdout.split("\n") if l.startswith("final: ")][0]

        killed = os.path.join(tmp, "killed")
        targets = sorted(rng.sample(range(2, len(expected) - 2), 8))
        plan = [None] + targets  # None: a random time
        during_write = 0  # kills that left a checkpoint's temporary file: killed while writing it
        for target in plan:
            proc = subprocess.Popen([binary, config, "--output", killed, "--resume"], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            if target is None:
                time.sleep(rng.uniform(0.1, 1.5))
            else:
                while rows_written(killed) < target and proc.poll() is None:
                    time.sleep(0.002)
                time.sleep(rng.uniform(0.0, 0.02))
            if proc.poll() is not None:
                out, err = proc.communicate()
                fail(f"the run ended before its kill (epoch {target}): exit {proc.returncode}: {err[-800:]}")
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            during_write += any(".tmp." in name for name in os.listdir(killed)) if os.path.isdir(killed) else 0
            # The next run resumes from the checkpoint last_checkpoint names, which must be whole:
            # a truncated file fails its checks there (exit 1).
        p = run(binary, [config, "--output", killed, "--resume"])
        if p.returncode != 0:
            fail(f"the last resumed run: exit {p.returncode}: {p.stderr[-800:]}")
        if "resumed from" not in p.stdout:
            fail("the last run did not resume: " + p.stdout[-500:])
        got = epoch_rows(killed)
        if got != expected:
            fail(f"after the kills the epoch rows differ from the straight run's:\n{got[-3:]}\nvs\n{expected[-3:]}")
        final = [l for l in p.stdout.split("\n") if l.startswith("final: ")][0]
        strip = lambda s: s.rsplit("|", 1)[0]
        if strip(final) != strip(final_expected):
            fail(f"final lines differ: {final} vs {final_expected}")
        print(f"{len(plan)} SIGKILLs (after epochs' rows {targets}; {during_write} during a checkpoint write), "
              f"each followed by --resume: the "
              f"{len(expected)} epochs' scores equal the straight run's, bit for bit "
              f"({strip(final_expected).strip()})")


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
        cmd_strict(binary, rest[0])
    elif command == "usage":
        cmd_usage(binary)
    elif command == "unwritable":
        cmd_unwritable(binary, rest[0])
    elif command == "kill":
        cmd_kill(binary, rest[0], int(rest[1]) if len(rest) > 1 else 0)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
