"""cli.py's tests of training-loop options set from the command line (top-k, max-steps,
val-steps, val-sets, test-stage): save_top_k keeps the k best files and export takes the best;
max_steps ends the epoch it is reached in, which validates; val_interval_steps validates
between batches, where the best checkpoint follows; val_loaders validates on several sets,
scores named by each; a test section scores the best checkpoint after training and with
--test-only --resume, and its mistakes exit 2; --audit-syncs prints which config-loaded hook
reads the device, at which point and how often."""
import json
import os
import re
import tempfile

from cli_common import SHRUNK, closing, epoch_rows, fail, run


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


def cmd_val_steps(binary):
    """trainer.params.val_interval_steps from the command line: 2 epochs of 16 updates validated
    every 5 updates (val_interval 0: by updates only) print a line for each validation between
    batches (updates 5, 10, ..., 30), and the best checkpoint is one of them
    (best_psnr_iter_<steps>.pt), which --resume goes on from; -1 exits 2 naming the key."""
    early_stopping = "trainer.params.hooks.4.params.patience=100"  # every validation counts
    args = ["--set", "trainer.params.epochs=2", "--set", "data.train.params.count=256", "--set",
            "trainer.params.val_interval=0", "--set", "trainer.params.val_interval_steps=5",
            "--set", early_stopping]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        p = run(binary, ["--output", out, *args])
        if p.returncode != 0:
            fail(f"exit code {p.returncode}: {p.stdout[-1500:]}\n{p.stderr[-1500:]}")
        steps = [int(m) for m in re.findall(r"^epoch \d/2 step (\d+) \| val ", p.stdout, re.M)]
        if steps != [5, 10, 15, 20, 25, 30]:
            fail(f"expected validations at steps 5, 10, ..., 30: {steps}\n{p.stdout[-2000:]}")
        best = [f for f in os.listdir(out) if f.startswith("best_psnr_")]
        if len(best) != 1 or not re.fullmatch(r"best_psnr_iter_(5|10|15|20|25|30)\.pt", best[0]):
            fail(f"the best checkpoint should be one taken between batches: {sorted(os.listdir(out))}")
        final = closing(p.stdout)
        if not final.startswith("final: val PSNR"):
            fail(f"the closing line should give the last validation's scores: {final}")
        p = run(binary, ["--output", out, *args, "--resume", os.path.join(out, best[0])])
        if p.returncode != 0 or "resumed from" not in p.stdout:
            fail(f"--resume from {best[0]} failed: {p.returncode} {p.stdout[-1500:]}{p.stderr[-800:]}")
        p = run(binary, ["--output", os.path.join(tmp, "bad"), "--set", "trainer.params.val_interval_steps=-1"])
        if p.returncode != 2 or "val_interval_steps" not in p.stderr:
            fail(f"val_interval_steps -1 should exit 2 naming the key: {p.returncode} {p.stderr}")
        print(f"validations between batches at steps {steps}; best {best[0]}, resumed from; "
              f"-1: {p.stderr.strip()}")


def cmd_val_sets(binary):
    """trainer.params.val_loaders in a copy of the default config: two named validation sets, their
    scores as val_<set>/<score> in metrics.jsonl and by set on the closing line, the monitor
    and the best checkpoint following one set's PSNR; a monitor naming no set's score (--strict)
    and a set name with '/' exit 2 naming them."""
    with tempfile.TemporaryDirectory() as tmp:
        # The default config as a user edits a copy of it: val_loader becomes val_loaders.
        default = run(binary, ["--print-default"]).stdout
        line = "    val_loader: ${ref:loaders.val}\n"
        if line not in default:
            fail(f"the default config has no line {line!r}")
        config = os.path.join(tmp, "two_sets.yaml")
        with open(config, "w") as f:
            f.write(default.replace(line, "    val_loaders:\n      procedural: ${ref:loaders.val}\n"
                                          "      small: ${ref:loaders.small}\n"))
        sets = [config, "--set", "data.small={_target: ProceduralImages, params: {count: 16, size: 48, seed: 3}}",
                "--set", 'loaders.small={_target: DataLoader, params: {dataset: "${ref:data.small}", batch_size: 16}}']
        follow = ["--set", "trainer.params.monitor=small/psnr",
                  "--set", "trainer.params.hooks.3.params.save_best=small/psnr"]
        small = ["--set", "trainer.params.epochs=2", *SHRUNK]
        out = os.path.join(tmp, "run")
        p = run(binary, ["--output", out, "--strict", *small, *sets, *follow])
        if p.returncode != 0:
            fail(f"exit code {p.returncode}: {p.stdout[-1500:]}\n{p.stderr[-1500:]}")
        rows = epoch_rows(out)
        for key in ("val_procedural/psnr", "val_small/psnr", "val_small/bicubic_psnr", "val_small/loss"):
            if any(key not in row for row in rows):
                fail(f"every epoch row should have {key}: {rows}")
        if rows[0]["val_procedural/psnr"] == rows[0]["val_small/psnr"]:
            fail(f"two different sets gave the same PSNR: {rows[0]}")
        final = closing(p.stdout)
        if "procedural: PSNR" not in final or "small: PSNR" not in final or "(bicubic " not in final:
            fail(f"the closing line should give each set's scores beside bicubic: {final}")
        best = [f for f in os.listdir(out) if f.startswith("best_")]
        if len(best) != 1 or not re.fullmatch(r"best_small_psnr_epoch_[12]\.pt", best[0]):
            fail(f"the best checkpoint should follow small/psnr: {sorted(os.listdir(out))}")
        mistakes = [(["--strict", *sets, "--set", "trainer.params.monitor=smal/psnr"],
                     "closest: small/psnr"),
                    ([*sets, "--set", 'trainer.params.val_loaders={"a/b": "${ref:loaders.val}"}'],
                     "trainer.params.val_loaders: expected loaders by set name, each name non-empty and without '/'")]
        said = []
        for args, says in mistakes:
            p = run(binary, ["--output", os.path.join(tmp, "bad"), "--check", *args])
            if p.returncode != 2 or says not in p.stderr:
                fail(f"{' '.join(args)} should exit 2 saying '{says}': {p.returncode} {p.stderr[-800:]}")
            said.append(p.stderr.strip().split("\n")[-1])
        print(f"{final}; best {best[0]}; mistakes: {' / '.join(said)}")


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


def cmd_audit_syncs(binary):
    """--audit-syncs on the default config: after training, a table whose rows inside the
    training steps are the config-loaded hooks that read the loss on the host, named with their
    point and component, at their intervals (ProgressBar's refresh 16, TensorBoardLogger's 64):
    the runner's own phases and the other hooks read nothing there."""
    with tempfile.TemporaryDirectory() as tmp:
        p = run(binary, ["--output", os.path.join(tmp, "run"), "--audit-syncs", "--set",
                         "trainer.params.epochs=1", "--set", "data.train.params.count=2048"])
        if p.returncode != 0:
            fail(f"exit code {p.returncode}: {p.stdout[-1500:]}\n{p.stderr[-1500:]}")
        head = re.search(r"^sync audit: (\d+) training steps; .*$", p.stdout, re.M)
        if not head:
            fail(f"no sync audit table after training: {p.stdout[-1500:]}")
        steps = int(head.group(1))
        lines = p.stdout[head.end():].strip().splitlines()
        rows = [re.split(r"\s{2,}", line.strip()) for line in lines[1:] if not line.startswith("final:")]
        in_steps = {(r[2], r[3]): int(r[4]) for r in rows if r[0] == "train"}
        expected = {("ProgressBar.step@on_post_step (TrainingEpochRunner)", "aten::item"): steps // 16,
                    ("TensorBoardLogger.log@on_post_step (TrainingEpochRunner)", "aten::item"): steps // 64}
        if steps != 128 or in_steps != expected:
            fail(f"expected 128 steps (2048 samples, batch 16) and, inside them, {expected}; got {steps} steps and {in_steps}:\n"
                 + "\n".join(lines))
        print(f"--audit-syncs: {steps} steps; in them {in_steps}")
