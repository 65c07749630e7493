"""The case trained_roundtrip of interop.py: weights across the border as a user moves them,
with real runs of hookforge-run (interop_common.RUN) on configs/sr_photos.yaml.

hookforge -> Python: hookforge-run trains the config for an epoch (fewer patches), its
CheckpointSaver writing each checkpoint's weights as .safetensors beside it; `hookforge-run
export RUN --format pth` writes the best checkpoint's as .pth. A plain PyTorch ESPCN
(residual, as the config's) loads both with load_state_dict(strict=True), and on the
validation photographs its output equals hookforge's ESPCN loaded from the checkpoint.

Python -> hookforge: an ESPCN trained in PyTorch for a few Adam steps, torch.save'd,
fine-tunes in hookforge-run through `Pretrained`; saved under a wrapper ('net.' names) it
is a config error naming the closest names, until strip_prefix: ["net."].
"""
import copy
import os
import re
import subprocess
import sys
import time

import torch
import yaml
from torch import nn

import interop_common
from interop_common import fail
from interop_espcn import ESPCN, hookforge_espcn
from interop_photos import SR_PHOTOS, high_and_low

STEPS, BATCH, PATCH = 50, 16, 48  # Python's training: Adam steps, patches a step, HR side
SHORT = ["--set", "trainer.params.epochs=1", "--set", "data.train.params.repeat=8",
         "--device", "cpu"]


def skip(reason):
    print(f"trained_roundtrip: skipped: {reason}")
    sys.exit(77)


def hookforge_run(args, expect=0):
    """hookforge-run with `args`; fails unless it exits `expect`. Returns stdout + stderr."""
    p = subprocess.run([interop_common.RUN] + [str(a) for a in args], capture_output=True,
                       text=True)
    if p.returncode != expect:
        fail(f"hookforge-run {' '.join(map(str, args))} exited {p.returncode}, not {expect}:\n"
             f"{p.stdout.strip()}\n{p.stderr.strip()}")
    return p.stdout + p.stderr


def expect_in(label, output, *texts):
    for text in texts:
        if text not in output:
            fail(f"{label}: hookforge-run should say '{text}':\n{output.strip()}")


def the_config():
    """configs/sr_photos.yaml, checked to have what the case shortens and changes; skips where
    the photographs are missing."""
    if not interop_common.RUN:
        skip("no hookforge-run given (interop.py PROBE trained_roundtrip HOOKFORGE_RUN)")
    if not os.path.isfile(interop_common.RUN):
        skip(f"hookforge-run is not built ({interop_common.RUN})")
    with open(SR_PHOTOS) as f:
        config = yaml.safe_load(f)
    try:
        train, val = config["data"]["train"]["params"], config["data"]["val"]["params"]
        hooks = config["trainer"]["params"]["hooks"]
        config["trainer"]["params"]["epochs"], train["repeat"], config["model"]["params"]
    except (KeyError, TypeError) as e:
        fail(f"{SR_PHOTOS}: no {e}, which trained_roundtrip shortens or reads")
    savers = [i for i, h in enumerate(hooks) if h.get("_target") == "CheckpointSaver"]
    if config["model"]["_target"] != "ESPCN" or len(savers) != 1:
        fail(f"{SR_PHOTOS}: trained_roundtrip expects an ESPCN and one CheckpointSaver")
    missing = [f for f in train["files"] + val["files"]
               if not os.path.exists(os.path.join(config["photos"], f))]
    if missing:
        skip(f"no {', '.join(missing)} in {config['photos']}: {config['missing']}")
    return config, savers[0]


def espcn_of(config):
    p = config["model"]["params"]
    return ESPCN(config["scale"], p["channels"], p["features"], p["residual"])


def hookforge_to_python(config, saver, work):
    """Trains with hookforge-run, exports; returns the summary's words."""
    from safetensors.torch import load_file
    scale, run = config["scale"], os.path.join(work, "run")
    started = time.monotonic()
    hookforge_run([SR_PHOTOS, *SHORT, "--set",
                   f"trainer.params.hooks.{saver}.params.weights_format=safetensors",
                   "--output", run])
    seconds = time.monotonic() - started
    out = hookforge_run(["export", run, "--format", "pth"])
    found = re.search(r"of '([^']*)' \(hookforge checkpoint, section 'model'\) to '([^']*)' "
                      r"\(pth, \d+ bytes\)", out)
    if not found:
        fail(f"hookforge-run export {run} should name the checkpoint and the .pth: {out}")
    checkpoint, pth = found.groups()
    best = [f for f in os.listdir(run) if f.startswith("best_") and f.endswith(".pt")]
    stem = os.path.splitext(checkpoint)[0]
    if best != [os.path.basename(checkpoint)] or pth != stem + ".pth":
        fail(f"export took {checkpoint} to {pth}; the run's best checkpoints: {best}")
    safetensors = stem + ".safetensors"
    for file in (pth, safetensors):
        if not os.path.isfile(file):
            fail(f"{file} should exist after the run and the export: {sorted(os.listdir(run))}")
    models = {}
    for file, state in [(pth, torch.load(pth)), (safetensors, load_file(safetensors))]:
        model = espcn_of(config)
        model.load_state_dict(state, strict=True)
        models[file] = model.eval()
    a, b = (list(m.state_dict().items()) for m in models.values())
    if [n for n, _ in a] != [n for n, _ in b] or \
            not all(torch.equal(x, y) for (_, x), (_, y) in zip(a, b)):
        fail(f"{pth} and {safetensors} should hold the same weights")
    val = config["data"]["val"]["params"]["files"]
    inputs = [high_and_low(os.path.join(config["photos"], f), scale)[1] for f in val]
    got = hookforge_espcn(checkpoint, scale, inputs, work, residual=True)
    worst = 0.0
    for name, x, g in zip(val, inputs, got):
        for file, model in models.items():
            with torch.no_grad():
                diff = float((model(x) - g).abs().max())
            if not diff <= 1e-5:
                fail(f"{name}: PyTorch's ESPCN with {file} and hookforge's with {checkpoint} "
                     f"differ by up to {diff}")
            worst = max(worst, diff)
    sizes = ", ".join(f"{os.path.basename(f)} ({os.path.getsize(f)} bytes)"
                      for f in (checkpoint, safetensors, pth))
    return (f"hookforge-run trained sr_photos.yaml for an epoch ({seconds:.1f} s): {sizes}; "
            f"the .safetensors (CheckpointSaver) and .pth (export) load strictly in PyTorch's "
            f"ESPCN (residual) and equal hookforge's output on {', '.join(val)} (Y, LR by "
            f"antialiased bicubic): largest difference {worst:.2e} (<= 1e-5)")


class Wrapper(nn.Module):
    """A network held as `self.net`, as a LightningModule holds it: names under 'net.'."""

    def __init__(self, net):
        super().__init__()
        self.net = net


def python_to_hookforge(config, work):
    """Trains in PyTorch, fine-tunes with hookforge-run; returns the summary's words."""
    scale = config["scale"]
    pngs = [f for f in config["data"]["train"]["params"]["files"] if f.endswith(".png")]
    photos = [high_and_low(os.path.join(config["photos"], f), scale) for f in pngs]
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model = espcn_of(config)
    adam = torch.optim.Adam(model.parameters(), lr=1e-3)
    side, losses = PATCH // scale, []
    for _ in range(STEPS):
        hrs, lrs = [], []
        for _ in range(BATCH):
            hr, lr = photos[int(torch.randint(len(photos), (1,), generator=gen))]
            y = int(torch.randint(lr.shape[-2] - side + 1, (1,), generator=gen))
            x = int(torch.randint(lr.shape[-1] - side + 1, (1,), generator=gen))
            lrs.append(lr[..., y:y + side, x:x + side])
            hrs.append(hr[..., y * scale:(y + side) * scale, x * scale:(x + side) * scale])
        loss = nn.functional.l1_loss(model(torch.cat(lrs)), torch.cat(hrs))
        adam.zero_grad()
        loss.backward()
        adam.step()
        losses.append(loss.item())
    plain, wrapped = os.path.join(work, "espcn_python.pth"), os.path.join(work, "wrapped.pth")
    torch.save(model.state_dict(), plain)
    torch.save(Wrapper(model).state_dict(), wrapped)

    def config_with(file, **options):
        c = copy.deepcopy(config)
        c["model"] = {"_target": "Pretrained",
                      "params": {"model": config["model"], "file": file, **options}}
        path = os.path.join(work, f"finetune{len(os.listdir(work))}.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(c, f, sort_keys=False)
        return path

    out = hookforge_run([config_with(plain), *SHORT, "--output", os.path.join(work, "finetune")])
    expect_in("fine-tuning the PyTorch-trained ESPCN", out,
              "Pretrained: loaded 6 of 6 tensors from", "PyTorch archive (torch.save)")
    out = hookforge_run([config_with(wrapped), *SHORT, "--output", os.path.join(work, "wrong")],
                        expect=2)
    expect_in("the ESPCN saved under 'net.'", out, "closest in the file: net.conv1.weight")
    out = hookforge_run([config_with(wrapped, strip_prefix=["net."]), *SHORT, "--check"])
    expect_in("the ESPCN saved under 'net.', strip_prefix: ['net.']", out,
              "Pretrained: loaded 6 of 6 tensors from", "renamed 6")
    return (f"an ESPCN trained in PyTorch ({STEPS} Adam steps on {len(pngs)} training "
            f"photographs, L1 {losses[0]:.4f} -> {losses[-1]:.4f}), torch.save'd, fine-tuned "
            f"by hookforge-run through Pretrained (loaded 6 of 6 tensors, PyTorch archive "
            f"(torch.save)); saved under 'net.', exit 2 naming net.conv1.weight as the closest, "
            f"and with strip_prefix: ['net.'] loaded")


def check_trained_roundtrip(work):
    config, saver = the_config()
    there = hookforge_to_python(config, saver, work)
    back = python_to_hookforge(config, work)
    print(f"trained_roundtrip: {there}; {back}")
