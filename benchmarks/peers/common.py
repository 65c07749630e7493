"""What the Python peers share: the default job's data, ESPCN, PSNR/SSIM in plain torch,
the command line and the closing RESULT line.

    python X.py --data DIR --epochs E --work-dir W [--workers N]

DIR holds raw little-endian float32 files (hookforge_peer_data, or fake_data.py for a quick
test) and shapes.json. Each script calls torch.set_num_threads(1) and
torch.set_num_interop_threads(1) itself, first thing.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "weights"))
import espcn  # noqa: E402  (examples/weights/espcn.py: hookforge's ESPCN in PyTorch)


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", required=True, help="folder of *.f32 files and shapes.json")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--work-dir", required=True, help="everything the run writes goes here")
    parser.add_argument("--workers", type=int, default=0, help="DataLoader num_workers")
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    return args


NAMES = ("train_input", "train_target", "val_input", "val_target", "val_bicubic")


def load_data(folder, names=NAMES):
    """name -> tensor, shaped as shapes.json says."""
    with open(os.path.join(folder, "shapes.json")) as f:
        shapes = json.load(f)
    return {name: torch.from_numpy(np.fromfile(os.path.join(folder, name + ".f32"), dtype="<f4")
                                   .reshape(shapes[name])) for name in names}


def loaders(args):
    """The job's loaders over --data: training (batch 16, shuffled, seed 0), validation (batch
    32; input, target, bicubic), each with --workers workers."""
    data = load_data(args.data)
    train = DataLoader(TensorDataset(data["train_input"], data["train_target"]), batch_size=16,
                       shuffle=True, generator=torch.Generator().manual_seed(0), num_workers=args.workers)
    val = DataLoader(TensorDataset(data["val_input"], data["val_target"], data["val_bicubic"]),
                     batch_size=32, num_workers=args.workers)
    return train, val


def ESPCN(scale=2, channels=1, features=64):
    """Residual ESPCN (conv3 starts at zero: the untrained network is bicubic), the one
    examples/weights/espcn.py defines as hookforge's, layer for layer."""
    return espcn.ESPCN(scale, channels, features, residual=True)


def psnr(pred, target):
    """Per sample 10 log10(1 / mse over C, H, W); data range 1. Shape [N]."""
    mse = (pred - target).pow(2).flatten(1).mean(1)
    return 10 * torch.log10(1.0 / mse)


_WINDOW = {}


def _window(channels, dtype):
    key = (channels, dtype)
    if key not in _WINDOW:
        g = torch.exp(-0.5 * ((torch.arange(11, dtype=torch.float64) - 5) / 1.5) ** 2)
        g = g / g.sum()
        _WINDOW[key] = torch.outer(g, g).to(dtype).expand(channels, 1, 11, 11).contiguous()
    return _WINDOW[key]


def ssim(pred, target, c1=0.01 ** 2, c2=0.03 ** 2):
    """Per sample mean of the SSIM map; 11 x 11 Gaussian window, sigma 1.5, "valid"
    convolution (only windows fully inside the image). Shape [N]."""
    c = pred.shape[1]
    w = _window(c, pred.dtype)
    blur = lambda t: F.conv2d(t, w, groups=c)  # noqa: E731
    mu_p, mu_t = blur(pred), blur(target)
    var_p = blur(pred * pred) - mu_p ** 2
    var_t = blur(target * target) - mu_t ** 2
    cov = blur(pred * target) - mu_p * mu_t
    s = ((2 * mu_p * mu_t + c1) * (2 * cov + c2)) / ((mu_p ** 2 + mu_t ** 2 + c1) * (var_p + var_t + c2))
    return s.flatten(1).mean(1)


def print_result(framework, epochs, seconds, val_psnr, val_bicubic_psnr):
    print("RESULT " + json.dumps({"framework": framework, "epochs": epochs, "seconds": round(seconds, 3),
                                  "val_psnr": float(val_psnr), "val_bicubic_psnr": float(val_bicubic_psnr)}),
          flush=True)
