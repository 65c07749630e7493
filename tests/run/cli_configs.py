"""cli.py's config and command-line checks (configs, bad, limits, train, default, strict, usage):
every config in configs/ passes --check; malformed and oversized configs exit 2 with one
FILE:LINE: message and create nothing, and truncations of the default never crash; a short run
trains; --print-default is configs/default.yaml byte for byte; --strict turns a warning into
exit 2; command-line mistakes exit 2 creating nothing."""
import os
import re
import subprocess
import tempfile

from cli_common import fail, nothing_in, run


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
