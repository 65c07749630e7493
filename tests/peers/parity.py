#!/usr/bin/env python3
"""Where hookforge promises a peer's behaviour, the peer's own code on the same inputs.

    parity.py PARITY_BINARY early_stopping|schedulers|clip|metrics|ema|checkpoint|top_k|warmup

Run with the Python of scripts/peers.sh (PyTorch 2.11, Lightning, torchmetrics). hookforge's
side is tests/peers/parity.cpp; each check prints what it compared, and exits 1 at the first
difference, naming the inputs.

early_stopping  EarlyStopping against Lightning's EarlyStopping._evaluate_stopping_criteria on
                scripted and random score sequences (mode, min_delta, patience,
                stopping_threshold, check_finite, NaN and inf), straight and with the state
                saved and loaded into a new callback after a random epoch. Scores go to
                Lightning as float64 tensors (logged metrics are often float32; the rule is
                the same, and float64 keeps the boundary cases exact).
schedulers      StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LinearLR, ConstantLR
                against torch.optim.lr_scheduler of PyTorch 2.11: each epoch's lr, to 1e-12.
clip            GradientClip against torch.nn.utils.clip_grad_norm_ (norm types 1, 2, 3.5,
                inf; the total norm returned) and clip_grad_value_, on random gradients of
                several tensors: equal to float32 rounding (1e-6 relative).
metrics         PSNR and SSIM against torchmetrics. torchmetrics' PeakSignalNoiseRatio
                takes the MSE of the whole batch by default; hookforge's PSNR is the mean of
                the samples' PSNRs (BasicSR's, the SR papers'), which torchmetrics gives with
                dim=(1, 2, 3): compared so, and the default checked to differ. SSIM:
                torchmetrics (1.9) pads the images by reflection and averages the SSIM map
                over the whole image, border included; hookforge averages over the windows
                that lie inside the image, as Wang's reference, BasicSR and scikit-image do.
                Compared: torchmetrics' own map (return_full_image) without its 5-pixel
                padded border, per sample, then averaged; and its default checked to differ.
ema             EMA against MMEngine's EMAHook driving its ExponentialMovingAverage (the
                update ema = (1 - momentum) ema + momentum param, the first one a copy, from
                the iteration begin_iter says), run with a stand-in runner: the weights
                validation uses after each run, to 1e-6.
checkpoint      CheckpointSaver's retention against MMEngine's CheckpointHook (interval,
                max_keep_ckpts, save_last, save_begin, save_best by greater/less, ties),
                driven as its EpochBasedTrainLoop does with a stand-in runner, straight and
                resumed after an epoch from the message hub in that epoch's checkpoint: the
                files in the folder after every epoch, equal. One difference, checked: at an
                epoch off the interval whose score improves, MMEngine also writes epoch_N.pth
                (PR #1168's re-save, which refreshes the best path in the message hub), which
                counts in max_keep_ckpts; it does so only once the hook object has written an
                epoch checkpoint, so not after a resume until the next one. hookforge writes
                only the best file there (its bookkeeping is in every checkpoint it writes).
top_k           CheckpointSaver's save_top_k against Lightning's ModelCheckpoint: see
                parity_top_k.py.
warmup          LRWarmup (linear, constant) over an epoch StepLR: the lr of every optimiser
                step, to 1e-12, equal to PyTorch's LinearLR / ConstantLR (total_iters =
                warmup_iters) stepped per iteration, chained with StepLR per epoch; and to
                MMEngine's LinearLR / ConstantLR by iteration with end = warmup_iters + 1 (its
                `end` counts one more: total_iters = end - begin - 1), driven as its
                ParamSchedulerHook does. MMEngine's with end = warmup_iters, checked to differ,
                reaches the full rate one step sooner. The exponential mode (mmcv's 'exp'
                warm-up) has no peer code here.
"""
import copy
import logging
import math
import os
import random
import subprocess
import sys
import tempfile
import types

import numpy as np
import torch


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def hookforge(binary, *args):
    p = subprocess.run([binary] + [str(a) for a in args], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"parity {' '.join(map(str, args))} exited {p.returncode}: {p.stderr}")
    return p.stdout.split()


def hookforge_lines(binary, command, lines, env=None):
    """One driver process for many cases: a case per line on stdin, an answer per line."""
    p = subprocess.run([binary, command, "-"], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, env=env)
    if p.returncode != 0:
        fail(f"parity {command} - exited {p.returncode}: {p.stderr}")
    answers = p.stdout.split("\n")[:len(lines)]
    if len(answers) != len(lines):
        fail(f"parity {command} answered {len(answers)} of {len(lines)} cases")
    return answers


def text(x):
    return "nan" if math.isnan(x) else ("inf" if x == math.inf else ("-inf" if x == -math.inf else repr(x)))


# --- EarlyStopping -----------------------------------------------------------------------------

def lightning_stop(scores, mode, min_delta, patience, threshold, check_finite, resume_at):
    from pytorch_lightning.callbacks import EarlyStopping

    def make():
        return EarlyStopping(monitor="score", mode=mode, min_delta=min_delta, patience=patience,
                             stopping_threshold=threshold, check_finite=check_finite)

    es = make()
    for epoch, score in enumerate(scores, start=1):
        stop, _ = es._evaluate_stopping_criteria(torch.tensor(score, dtype=torch.float64))
        if stop:
            return epoch
        if epoch == resume_at:
            state = es.state_dict()
            es = make()
            es.load_state_dict(state)
    return 0


def check_early_stopping(binary):
    rng = random.Random(7)
    cases = [  # (scores, mode, min_delta, patience, threshold, check_finite)
        ([1.0, 0.9, 0.9, 0.9], "min", 0.0, 2, None, True),           # equal is no improvement
        ([1.0, 0.9, 0.85, 0.84], "min", 0.05, 2, None, True),        # by more than min_delta
        ([1.0, 0.95, 0.9, 0.9], "min", 0.05, 1, None, True),         # exactly min_delta: none
        ([0.1, 0.2, 0.3, 0.3, 0.3], "max", 0.0, 2, None, True),
        ([1.0, float("nan"), 0.5], "min", 0.0, 3, None, True),       # non-finite: at once
        ([1.0, float("nan"), 0.5, 0.6, 0.7], "min", 0.0, 3, None, False),  # NaN counts as worse
        ([1.0, float("inf"), 0.9], "min", 0.0, 3, None, True),
        ([1.0, 0.5, 0.09, 0.08], "min", 0.0, 5, 0.1, True),          # threshold: better than
        ([0.1, 0.5, 0.95, 0.99], "max", 0.0, 5, 0.95, True),         # equal to it is not
        ([5.0, 4.0, 4.0, 3.0, 3.0, 3.0], "min", 0.0, 2, None, True),
    ]
    for _ in range(300):
        mode = rng.choice(["min", "max"])
        n = rng.randint(1, 25)
        scores = [round(rng.uniform(0, 1), rng.choice([1, 2, 6])) for _ in range(n)]
        if rng.random() < 0.2:
            scores[rng.randrange(n)] = rng.choice([float("nan"), float("inf"), -float("inf")])
        threshold = rng.choice([None, None, round(rng.uniform(0, 1), 2)])
        cases.append((scores, mode, rng.choice([0.0, 0.0, 0.01, 0.1]), rng.randint(1, 5),
                      threshold, rng.random() < 0.8))
    runs = []  # (case, resume_at, Lightning's answer, the driver's line)
    for case in cases:
        scores, mode, min_delta, patience, threshold, check_finite = case
        for resume_at in sorted({0, rng.randint(1, len(scores))}):
            want = lightning_stop(scores, mode, min_delta, patience, threshold, check_finite,
                                  resume_at)
            line = " ".join(map(str, ["less" if mode == "min" else "greater", min_delta, patience,
                                      "none" if threshold is None else threshold,
                                      int(check_finite), resume_at, *map(text, scores)]))
            runs.append((case, resume_at, want, line))
    answers = hookforge_lines(binary, "early_stopping", [line for *_, line in runs])
    compared = 0
    for (case, resume_at, want, _), got in zip(runs, answers):
        scores, mode, min_delta, patience, threshold, check_finite = case
        if int(got) != want:
            fail(f"EarlyStopping(mode={mode}, min_delta={min_delta}, patience={patience}, "
                 f"stopping_threshold={threshold}, check_finite={check_finite}) on {scores}, "
                 f"resumed after epoch {resume_at}: hookforge stops at epoch {got}, "
                 f"Lightning at {want} (0: never)")
        compared += 1
    print(f"early_stopping: {compared} score sequences ({len(cases)} settings, straight and "
          f"resumed), the same stopping epoch as Lightning's EarlyStopping")


# --- schedulers --------------------------------------------------------------------------------

def check_schedulers(binary):
    S = torch.optim.lr_scheduler
    cases = [
        ("StepLR", [3, 0.5], lambda o: S.StepLR(o, step_size=3, gamma=0.5)),
        ("MultiStepLR", [4, 9, 0.2], lambda o: S.MultiStepLR(o, milestones=[4, 9], gamma=0.2)),
        ("ExponentialLR", [0.9], lambda o: S.ExponentialLR(o, gamma=0.9)),
        ("CosineAnnealingLR", [7, 0.001], lambda o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.001)),
        ("CosineAnnealingLR", [10, 0.0], lambda o: S.CosineAnnealingLR(o, T_max=10)),
        ("LinearLR", [0.25, 1.0, 5], lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=5)),
        ("LinearLR", [1.0, 0.1, 8], lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=8)),
        ("ConstantLR", [0.5, 4], lambda o: S.ConstantLR(o, factor=0.5, total_iters=4)),
        ("PolynomialLR", [8, 2.0], lambda o: S.PolynomialLR(o, total_iters=8, power=2.0)),
        ("PolynomialLR", [30, 1.0], lambda o: S.PolynomialLR(o, total_iters=30, power=1.0)),
        ("CosineAnnealingWarmRestarts", [4, 1, 0.001],
         lambda o: S.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=1, eta_min=0.001)),
        ("CosineAnnealingWarmRestarts", [3, 2, 0.0],
         lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2)),
        ("LambdaLR", [], lambda o: S.LambdaLR(o, lambda e: 0.5 ** (e // 3) + 0.01 * e)),
        ("OneCycleLR", [0.5, 25, 0, 0], lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=25)),
        ("OneCycleLR", [0.5, 25, 1, 1], lambda o: S.OneCycleLR(
            o, max_lr=0.5, total_steps=25, anneal_strategy="linear", three_phase=True)),
        ("SequentialLR", [5, 20], lambda o: S.SequentialLR(
            o, [S.LinearLR(o, 0.1, 1.0, 5), S.CosineAnnealingLR(o, T_max=20)], milestones=[5])),
        ("ChainedScheduler", [5, 0.9], lambda o: S.ChainedScheduler(
            [S.ConstantLR(o, factor=0.1, total_iters=5), S.ExponentialLR(o, gamma=0.9)])),
    ]
    epochs = 25
    for name, args, make in cases:
        p = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
        sched = make(opt)
        want = []
        for _ in range(epochs):
            # OneCycleLR also cycles the momentum: compared beside the lr.
            want.append((sched.get_last_lr()[0], opt.param_groups[0]["momentum"]))
            opt.step()
            sched.step()
        words = [float(x) for x in hookforge(binary, "scheduler", name, epochs, *args)]
        got = list(zip(words[0::2], words[1::2]))  # a line per step: lr, momentum
        for epoch, (g, w) in enumerate(zip(got, want, strict=True)):
            for what, gv, wv in zip(("lr", "momentum"), g, w):
                if abs(gv - wv) > 1e-12 * max(1.0, abs(wv)):
                    fail(f"{name}{tuple(args)}: epoch {epoch} {what} {gv!r}, "
                         f"PyTorch {torch.__version__} {wv!r}")
    print(f"schedulers: {len(cases)} schedules x {epochs} steps, each lr (and OneCycleLR's "
          f"momentum) equal to PyTorch {torch.__version__}'s torch.optim.lr_scheduler to 1e-12")


# --- GradientClip ------------------------------------------------------------------------------

def check_clip(binary):
    gen = torch.Generator().manual_seed(3)
    sizes = [7, 1, 30, 12]
    compared = 0
    with tempfile.TemporaryDirectory() as work:
        src, out = os.path.join(work, "grads.f32"), os.path.join(work, "clipped.f32")
        for scale in [1e-3, 1.0, 50.0]:
            grads = [torch.randn(n, generator=gen) * scale for n in sizes]
            torch.cat(grads).numpy().astype(np.float32).tofile(src)
            for mode, limit, norm_type in [("norm", 1.0, 2.0), ("norm", 0.5, 1.0),
                                           ("norm", 2.0, 3.5), ("norm", 0.3, math.inf),
                                           ("norm", 1e6, 2.0), ("value", 0.4, 2.0)]:
                params = [torch.zeros(n, requires_grad=True) for n in sizes]
                for p, g in zip(params, grads):
                    p.grad = g.clone()
                if mode == "norm":
                    total = float(torch.nn.utils.clip_grad_norm_(params, limit, norm_type=norm_type))
                else:
                    torch.nn.utils.clip_grad_value_(params, limit)
                want = torch.cat([p.grad for p in params]).numpy()
                printed = hookforge(binary, "clip", mode, text(limit), text(norm_type), src, out, *sizes)
                got = np.fromfile(out, dtype=np.float32)
                label = f"{mode} {limit} (norm_type {norm_type}) on gradients of scale {scale}"
                if not np.allclose(got, want, rtol=1e-6, atol=1e-12 * scale):
                    fail(f"GradientClip {label}: largest difference {np.abs(got - want).max()}")
                if mode == "norm" and not math.isclose(float(printed[0]), total, rel_tol=1e-6):
                    fail(f"GradientClip {label}: total norm {printed[0]}, torch {total}")
                compared += 1
    print(f"clip: {compared} cases (clip_grad_norm_ with norm types 1, 2, 3.5, inf and its total "
          f"norm; clip_grad_value_), equal to torch.nn.utils to 1e-6 relative")


# --- PSNR and SSIM -----------------------------------------------------------------------------

def check_metrics(binary):
    from torchmetrics.functional.image import structural_similarity_index_measure
    from torchmetrics.image import PeakSignalNoiseRatio
    gen = torch.Generator().manual_seed(5)
    compared = 0
    with tempfile.TemporaryDirectory() as work:
        fx, fy = os.path.join(work, "x.f32"), os.path.join(work, "y.f32")
        for shape, noise in [((4, 1, 32, 32), 0.05), ((3, 3, 24, 40), 0.2), ((2, 1, 11, 11), 0.01)]:
            y = torch.rand(shape, generator=gen)
            x = (y + noise * torch.randn(shape, generator=gen)).clamp(0, 1)
            x.numpy().astype(np.float32).tofile(fx)
            y.numpy().astype(np.float32).tofile(fy)
            psnr, ssim = (float(v) for v in hookforge(binary, "metrics", fx, fy, *shape))
            want_psnr = float(PeakSignalNoiseRatio(data_range=1.0, dim=(1, 2, 3))(x, y))
            batch_psnr = float(PeakSignalNoiseRatio(data_range=1.0)(x, y))
            padded_mean, ssim_map = structural_similarity_index_measure(
                x, y, data_range=1.0, return_full_image=True, reduction="none")
            want_ssim = float(ssim_map[..., 5:-5, 5:-5].reshape(shape[0], -1).mean(-1).mean())
            if not math.isclose(psnr, want_psnr, rel_tol=1e-5):
                fail(f"PSNR of {shape}: {psnr}, torchmetrics (dim=(1, 2, 3)) {want_psnr}")
            if math.isclose(psnr, batch_psnr, rel_tol=1e-7) and shape[0] > 1:
                fail(f"PSNR of {shape}: torchmetrics' default (the batch's MSE) should differ")
            if not math.isclose(ssim, want_ssim, rel_tol=1e-5, abs_tol=1e-6):
                fail(f"SSIM of {shape}: {ssim}, torchmetrics' map inside the image {want_ssim}")
            if shape[-1] > 11 and math.isclose(ssim, float(padded_mean.mean()), rel_tol=1e-6):
                fail(f"SSIM of {shape}: torchmetrics' default (the padded border in the mean) "
                     f"should differ")
            compared += 1
    print(f"metrics: PSNR and SSIM of {compared} batches equal torchmetrics' to 1e-5 (PSNR per "
          f"sample, dim=(1, 2, 3); SSIM over the windows inside the image), and its defaults "
          f"(the batch's MSE; the padded border in the SSIM mean) differ, as documented")


# --- EMA --------------------------------------------------------------------------------------

def check_ema(binary):
    sys.modules.setdefault("cv2", types.ModuleType("cv2"))  # imported by a hook not used here
    from mmengine.hooks import EMAHook

    gen = torch.Generator().manual_seed(11)
    sizes = [5, 1, 8]
    compared = 0
    with tempfile.TemporaryDirectory() as work:
        src, out = os.path.join(work, "updates.f32"), os.path.join(work, "used.f32")
        for momentum, begin_iter, steps in [(0.0002, 0, 50), (0.1, 0, 30), (0.5, 1, 10),
                                            (0.05, 7, 40), (0.999, 0, 5), (0.2, 12, 12),
                                            (0.3, 3, 2)]:
            updates = torch.randn(steps, sum(sizes), generator=gen)
            updates.numpy().astype(np.float32).tofile(src)
            model = torch.nn.Module()
            for i, n in enumerate(sizes):
                model.register_parameter(f"p{i}", torch.nn.Parameter(torch.zeros(n)))
            hook = EMAHook(momentum=momentum, begin_iter=begin_iter)
            runner = types.SimpleNamespace(model=model, iter=0, epoch=0)
            hook.before_run(runner)
            for step in range(steps):
                with torch.no_grad():
                    torch.nn.utils.vector_to_parameters(
                        torch.nn.utils.parameters_to_vector(model.parameters()) + updates[step],
                        model.parameters())
                runner.iter = step
                hook.after_train_iter(runner, step)
            # What MMEngine validates with: the EMA model's weights once started, else the
            # copy of the model's that it keeps until then (the same values).
            want = torch.nn.utils.parameters_to_vector(hook.ema_model.module.parameters())
            hookforge(binary, "ema", text(momentum), begin_iter, steps, src, out, *sizes)
            got = torch.from_numpy(np.fromfile(out, dtype=np.float32))
            if not torch.allclose(got, want.detach(), rtol=1e-6, atol=1e-6):
                fail(f"EMA(momentum={momentum}, begin_iter={begin_iter}) after {steps} updates: "
                     f"largest difference {float((got - want).abs().max())} from MMEngine's "
                     f"EMAHook and ExponentialMovingAverage")
            compared += 1
    print(f"ema: {compared} runs (momentum, begin_iter, steps), the weights validation uses equal "
          f"MMEngine's EMAHook with ExponentialMovingAverage to 1e-6")


# --- CheckpointSaver ---------------------------------------------------------------------------

def file_listing(work):
    """The files in `work` as the driver prints them: .pth as .pt, epoch files first, by number."""
    names = [n.replace(".pth", ".pt") for n in os.listdir(work) if n != "last_checkpoint"]
    return ",".join(sorted(names, key=lambda n: (n.startswith("best"), len(n), n)))


def mmengine_checkpoints(case, resume_at, work, resave_off_interval=True):
    """The files MMEngine's CheckpointHook leaves after each epoch ('|'-joined), and how many
    of its epoch checkpoints hold a best path that is not the current one. Without
    resave_off_interval, its re-save of a best epoch's checkpoint is kept to epochs whose
    checkpoint the interval wrote (the one difference from hookforge)."""
    sys.modules.setdefault("cv2", types.ModuleType("cv2"))  # imported by a hook not used here
    from mmengine.hooks import CheckpointHook
    from mmengine.logging import MessageHub, MMLogger
    MMLogger.get_current_instance().setLevel(logging.ERROR)  # FileClient's deprecation notes

    class OnInterval(CheckpointHook):
        def _save_best_checkpoint(self, runner, metrics):
            last = self.last_ckpt  # None: no re-save
            if last and os.path.basename(last) != self.filename_tmpl.format(runner.epoch):
                self.last_ckpt = None
            super()._save_best_checkpoint(runner, metrics)
            self.last_ckpt = self.last_ckpt or last

    class Runner:  # what the hook touches of mmengine.runner.Runner
        def __init__(self):
            self.work_dir, self.epoch, self.iter, self.max_epochs = work, 0, 0, len(scores)
            self.train_loop = types.SimpleNamespace(max_epochs=len(scores))
            self.message_hub = MessageHub(name="parity")
            self.logger = logging.getLogger("parity")
            self.saved = {}  # file name: the message hub's state stored in it

        def save_checkpoint(self, out_dir, filename, *args, **kwargs):
            with open(os.path.join(out_dir, filename), "w") as f:
                f.write("checkpoint\n")
            self.saved[filename] = copy.deepcopy(self.message_hub.state_dict())

    interval, max_keep, save_last, save_begin, rule, scores = case
    best = None if rule == "none" else "score"

    def make():
        return (CheckpointHook if resave_off_interval else OnInterval)(
            interval=interval, max_keep_ckpts=max_keep, save_last=save_last,
            save_begin=save_begin, save_best=best, rule=rule if best else None)

    runner, hook, files, stale = Runner(), make(), [], 0
    hook.before_train(runner)
    for epoch, score in enumerate(scores):
        runner.epoch = epoch  # the loop's order: after_train_epoch, epoch += 1, validation
        hook.after_train_epoch(runner)
        runner.epoch = epoch + 1
        hook.after_val_epoch(runner, {"score": score})
        files.append(file_listing(work))
        stored = runner.saved.pop(f"epoch_{epoch + 1}.pth", None)
        if stored and best and stored["runtime_info"].get("best_ckpt") != hook.best_ckpt_path:
            stale += 1
        if epoch + 1 == resume_at:  # Runner.resume: a new process, the hub from the checkpoint
            runner.message_hub = MessageHub(name="parity")
            runner.message_hub.load_state_dict(stored)
            hook = make()
            hook.before_train(runner)
    for name in os.listdir(work):
        os.remove(os.path.join(work, name))
    return "|".join(files), stale


def check_checkpoint(binary):
    rng = random.Random(17)
    cases = [  # (interval, max_keep_ckpts, save_last, save_begin, rule, scores)
        (1, -1, True, 0, "greater", [0.1, 0.2, 0.2, 0.3]),         # a best each epoch, a tie
        (2, -1, True, 0, "greater", [0.1, 0.2, 0.3, 0.3]),         # best at 3, off the interval
        (2, 2, False, 1, "less", [0.5, 0.4, 0.3, 0.2, 0.1, 0.0]),  # ... counting in max_keep
        (3, 1, True, 4, "none", [0.0] * 9),
    ]
    for _ in range(300):
        n = rng.randint(6, 12)
        kind = rng.random()
        if kind < 0.6:  # ties
            scores = [round(rng.uniform(0, 1), 1) for _ in range(n)]
        elif kind < 0.8:  # an improvement every epoch
            scores = sorted(round(rng.uniform(0, 1), 3) for _ in range(n))
        else:  # long plateaus
            scores = [round(rng.uniform(0, 1), 1) if rng.random() < 0.3 else 0.5 for _ in range(n)]
        cases.append((rng.randint(1, 3), rng.choice([-1, 1, 2, 3]), rng.random() < 0.5,
                      rng.randint(0, 4), rng.choice(["greater", "less", "none"]), scores))
    runs = []  # (case, resume_at, the driver's line)
    for case in cases:
        interval, max_keep, save_last, save_begin, rule, scores = case
        due = [e for e in range(save_begin, len(scores)) if e and (e - save_begin) % interval == 0]
        for resume_at in sorted({0, *rng.sample(due, min(2, len(due)))}):  # from epoch_N.pt
            runs.append((case, resume_at, " ".join(map(str, [
                interval, max_keep, int(save_last), save_begin, rule, resume_at, len(scores),
                *scores]))))
    # Thousands of small files, each fsynced by hookforge: on tmpfs where there is one.
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") else None
    answers = hookforge_lines(binary, "checkpoint", [line for *_, line in runs],
                              env=dict(os.environ, TMPDIR=scratch) if scratch else None)
    agree = resaved = stale = 0
    with tempfile.TemporaryDirectory(dir=scratch) as work:
        for (case, resume_at, line), got in zip(runs, answers):
            want, stale_here = mmengine_checkpoints(case, resume_at, work)
            stale += stale_here
            if got == want:
                agree += 1
            elif got == mmengine_checkpoints(case, resume_at, work, resave_off_interval=False)[0]:
                resaved += 1
            else:
                fail(f"CheckpointSaver on '{line}' (INTERVAL MAX_KEEP SAVE_LAST SAVE_BEGIN RULE "
                     f"RESUME_AT EPOCHS SCORE...), files after each epoch:\n  hookforge {got}\n"
                     f"  MMEngine  {want}")
    if resaved == 0:
        fail("CheckpointSaver: MMEngine's re-save of a best epoch off the interval should show")
    print(f"checkpoint: {len(runs)} runs ({len(cases)} settings, straight and resumed): the files "
          f"after every epoch equal MMEngine's CheckpointHook's in {agree}; in {resaved}, only as "
          f"documented: MMEngine also writes epoch_N.pth at an epoch off the interval whose score "
          f"improves (its re-save, PR #1168); {stale} of its epoch checkpoints hold a stale best "
          f"path")


# --- LRWarmup ---------------------------------------------------------------------------------

def peer_warmup_lrs(make_warmup, make_epoch, steps, epochs):
    """The lr of each step under a per-iteration warm-up scheduler chained with an epoch one,
    each stepped as MMEngine's ParamSchedulerHook does (after each iteration, each epoch)."""
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    warm, epoch_schedule, lrs = make_warmup(opt), make_epoch(opt), []
    for _ in range(epochs):
        for _ in range(steps):
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            warm.step()
        epoch_schedule.step()
    return lrs


def check_warmup(binary):
    sys.modules.setdefault("cv2", types.ModuleType("cv2"))  # imported by a hook not used here
    import mmengine.optim as M
    S = torch.optim.lr_scheduler
    compared = 0
    for mode, s, w, steps, epochs, step_size, gamma in [
            ("linear", 0.001, 10, 4, 5, 2, 0.5), ("linear", 0.25, 4, 3, 3, 1, 0.1),
            ("linear", 0.1, 1, 2, 3, 1, 0.5), ("linear", 1.0, 5, 3, 3, 2, 0.5),
            ("linear", 0.01, 25, 7, 6, 3, 0.2), ("constant", 0.1, 5, 3, 4, 2, 0.5),
            ("constant", 0.5, 1, 1, 4, 1, 0.9), ("constant", 0.001, 12, 5, 4, 3, 0.1)]:
        got = [float(x) for x in hookforge(binary, "warmup", mode, text(s), w, steps, epochs,
                                           step_size, gamma)]
        by_iter = dict(by_epoch=False, begin=0)
        factor = dict(start_factor=s) if mode == "linear" else dict(factor=s)
        torch_kind = S.LinearLR if mode == "linear" else S.ConstantLR
        mm_kind = M.LinearLR if mode == "linear" else M.ConstantLR
        peers = {
            f"PyTorch's {torch_kind.__name__}(total_iters={w})":
                (lambda o: torch_kind(o, total_iters=w, **factor),
                 lambda o: S.StepLR(o, step_size, gamma)),
            f"MMEngine's {mm_kind.__name__}(by_epoch=False, end={w + 1})":
                (lambda o: mm_kind(o, end=w + 1, **by_iter, **factor),
                 lambda o: M.StepLR(o, step_size, gamma, by_epoch=True)),
        }
        label = (f"LRWarmup({mode}, start_factor={s}, warmup_iters={w}) over "
                 f"StepLR({step_size}, {gamma})")
        for peer, (make_warmup, make_epoch) in peers.items():
            want = peer_warmup_lrs(make_warmup, make_epoch, steps, epochs)
            for step, (g, v) in enumerate(zip(got, want)):
                if abs(g - v) > 1e-12 * max(1.0, abs(v)):
                    fail(f"{label}: step {step} lr {g!r}, {peer} {v!r}")
        short = peer_warmup_lrs(lambda o: mm_kind(o, end=w, **by_iter, **factor),
                                lambda o: M.StepLR(o, step_size, gamma, by_epoch=True), steps,
                                epochs)
        if s < 1 and w > 1 and math.isclose(got[w - 1], short[w - 1], rel_tol=1e-12):
            fail(f"{label}: MMEngine's end={w} should reach the full rate at step {w - 1}")
        compared += 1
    print(f"warmup: LRWarmup (linear, constant) in {compared} runs over an epoch StepLR, each "
          f"step's lr equal to PyTorch's LinearLR/ConstantLR(total_iters=warmup_iters) and to "
          f"MMEngine's by iteration with end=warmup_iters+1 to 1e-12 (with end=warmup_iters, "
          f"checked to differ, MMEngine reaches the full rate one step sooner)")


def check_top_k(binary):
    from parity_top_k import check_top_k as check  # its own file: parity_top_k.py
    check(binary)


def main():
    binary, what = sys.argv[1], sys.argv[2]
    checks = {"early_stopping": check_early_stopping, "schedulers": check_schedulers,
              "clip": check_clip, "metrics": check_metrics, "ema": check_ema,
              "checkpoint": check_checkpoint, "warmup": check_warmup, "top_k": check_top_k}
    if what not in checks:
        fail(f"unknown check {what} ({', '.join(checks)})")
    checks[what](binary)


if __name__ == "__main__":
    main()
