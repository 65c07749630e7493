#!/usr/bin/env python3
"""Trains hookforge's ESPCN (x2, residual) in plain PyTorch and saves its state_dict.

    python3 examples/weights/train_espcn.py espcn_python.pth

300 Adam steps on random 48x48 patches (flipped and rotated at random) of scikit-image's
photographs in grayscale (the Y channel of the colour ones), or of smooth random images
where scikit-image is not importable; it says which. The camera man is left out: it is the
photograph evaluate.py measures on. A few seconds on a CPU. The file is what
examples/weights/finetune.cpp reads with hookforge::load_pretrained.
"""

import os
import sys

import torch
from torch.nn import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from espcn import ESPCN, bicubic, downscale, skimage_photographs, smooth_random_images

SCALE, PATCH, BATCH, STEPS, LR = 2, 48, 16, 300, 1e-3
PHOTOGRAPHS = ["astronaut", "chelsea", "coffee", "rocket", "coins", "moon", "page"]


def patches(images, g):
    """BATCH random PATCH x PATCH crops of `images`, each flipped and rotated at random."""
    out = []
    for i in torch.randint(len(images), (BATCH,), generator=g).tolist():
        image = images[i]
        y = torch.randint(image.shape[-2] - PATCH + 1, (1,), generator=g).item()
        x = torch.randint(image.shape[-1] - PATCH + 1, (1,), generator=g).item()
        patch = image[:, y : y + PATCH, x : x + PATCH]
        if torch.rand(1, generator=g).item() < 0.5:
            patch = patch.flip(-1)
        out.append(patch.rot90(torch.randint(4, (1,), generator=g).item(), (-2, -1)))
    return torch.stack(out)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: train_espcn.py OUT.pth")
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    photos = skimage_photographs(PHOTOGRAPHS)
    if photos:
        images = list(photos.values())
        print(f"training on scikit-image's photographs: {', '.join(photos)} (grayscale / Y)")
    else:
        images = smooth_random_images(64, 128, seed=2)
        print("no photographs (scikit-image not importable): "
              "training on 64 smooth random 128x128 images")

    model = ESPCN(scale=SCALE, residual=True)
    adam = torch.optim.Adam(model.parameters(), lr=LR)
    mse = bicubic_mse = 0.0
    for step in range(1, STEPS + 1):
        hr = patches(images, g)
        lr = downscale(hr, SCALE)
        loss = F.mse_loss(model(lr), hr)
        adam.zero_grad()
        loss.backward()
        adam.step()
        mse += loss.item()
        bicubic_mse += F.mse_loss(bicubic(lr, SCALE), hr).item()
        if step % 100 == 0:
            print(f"step {step}: MSE {mse / 100:.6f} (bicubic {bicubic_mse / 100:.6f})")
            mse = bicubic_mse = 0.0

    out = sys.argv[1]
    torch.save(model.state_dict(), out)
    print(f"saved {len(model.state_dict())} tensors to {out} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main()
