"""The case espcn_roundtrip of interop.py: hookforge's weights in PyTorch and PyTorch's in
hookforge give the same output. The PyTorch ESPCN is examples/weights/espcn.py's, hookforge's
layer for layer: these cases check that it is.
"""
import os
import sys
import tempfile

import numpy as np
import torch

from interop_common import fail, probe, probe_many
from interop_photos import photograph

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "weights"))
from espcn import ESPCN  # noqa: E402


def hookforge_espcn(weights, scale, inputs, work, residual=False):
    """hookforge's ESPCN (probe espcn) loaded from `weights` on each of `inputs` ([N, C, H, W]
    float32 tensors; a probe each, side by side); its outputs."""
    runs, outs = [], []
    for x in inputs:
        folder = tempfile.mkdtemp(dir=work)
        src, out = os.path.join(folder, "input.f32"), os.path.join(folder, "output.f32")
        x.contiguous().numpy().tofile(src)
        flag = ["residual"] if residual else []
        runs.append(["espcn", weights, scale, src, out, *x.shape, *flag])
        outs.append(out)
    got = []
    for args, x, out, p in zip(runs, inputs, outs, probe_many(runs)):
        if p.returncode != 0:
            fail(f"probe {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr.strip()}")
        got.append(torch.from_numpy(np.fromfile(out, dtype=np.float32)).reshape(
            x.shape[0], x.shape[1], x.shape[2] * scale, x.shape[3] * scale))
    return got


def check_espcn_roundtrip(work):
    from safetensors.torch import load_file, save_file
    x, source = photograph()
    worst, runs = 0.0, []

    def agree(label, weights, model, scale):
        nonlocal worst
        with torch.no_grad():
            want = model.eval()(x)
        got, = hookforge_espcn(weights, scale, [x], work)
        diff = float((got - want).abs().max())
        if not diff <= 1e-5:
            fail(f"{label}: hookforge's and PyTorch's ESPCN outputs differ by up to {diff} on "
                 f"{source}")
        worst = max(worst, diff)
        runs.append(label)

    for fmt, scale, seed in [("pth", 2, 9), ("safetensors", 3, 10)]:
        file = os.path.join(work, f"hookforge_espcn.{fmt}")
        probe("save-espcn", fmt, file, scale, seed)
        state = torch.load(file) if fmt == "pth" else load_file(file)
        model = ESPCN(scale)
        model.load_state_dict(state, strict=True)
        agree(f"hookforge's ESPCN x{scale} saved as .{fmt}, loaded by PyTorch", file, model, scale)
    for fmt, scale, seed in [("pth", 3, 11), ("safetensors", 2, 12)]:
        torch.manual_seed(seed)
        model = ESPCN(scale)
        file = os.path.join(work, f"pytorch_espcn.{fmt}")
        if fmt == "pth":
            torch.save(model.state_dict(), file)
        else:
            save_file(model.state_dict(), file)
        agree(f"PyTorch's ESPCN x{scale} saved as .{fmt}, loaded by hookforge", file, model, scale)
    print(f"espcn_roundtrip: {len(runs)} ways (hookforge -> PyTorch by .pth and .safetensors, "
          f"strict load_state_dict; PyTorch -> hookforge by both), hookforge's ESPCN and "
          f"PyTorch's give the same output on {source}: largest difference {worst:.2e} (<= 1e-5)")
