#!/usr/bin/env python3
"""Loads ESPCN weights written by hookforge into plain PyTorch and measures them.

    python3 examples/weights/evaluate.py runs/weights_example/espcn_finetuned.safetensors
    python3 examples/weights/evaluate.py runs/weights_example/espcn_finetuned.pth

The .safetensors goes through safetensors.torch.load_file, the .pth through torch.load
with its defaults (weights_only since PyTorch 2.6); either into examples/weights/espcn.py's
ESPCN (x2, residual) with load_state_dict(strict=True): the names are hookforge's. Prints
the PSNR of the model and of bicubic upscaling on the camera man (grayscale), downscaled
x2 by block means, 2 pixels cropped off each edge: scikit-image's, else Debian's copy of
its file decoded with PIL, else 8 smooth random images (it says which).
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from espcn import ESPCN, compare, skimage_photographs, smooth_random_images, to_gray

SCALE = 2
CAMERA_PNG = "/usr/lib/python3/dist-packages/skimage/data/camera.png"


def test_images():
    """{name: [1, H, W] image in [0, 1]} and where they came from."""
    photos = skimage_photographs(["camera"])
    if photos:
        return photos, "scikit-image's photograph"
    try:
        import numpy
        from PIL import Image

        return {"camera": to_gray(numpy.asarray(Image.open(CAMERA_PNG)))}, f"{CAMERA_PNG} (PIL)"
    except (ImportError, OSError):
        images = smooth_random_images(8, 256, seed=3)
        return {f"random {i}": image for i, image in enumerate(images)}, "smooth random images"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: evaluate.py WEIGHTS.safetensors|WEIGHTS.pth")
    file = sys.argv[1]
    if file.endswith(".safetensors"):
        import safetensors.torch

        state = safetensors.torch.load_file(file)
    else:
        state = torch.load(file)
    model = ESPCN(scale=SCALE, residual=True)
    model.load_state_dict(state, strict=True)
    model.eval()
    print(f"loaded {len(state)} tensors from {file}: {', '.join(state)}")

    images, source = test_images()
    print(f"PSNR x{SCALE} on {source}, Y channel, {SCALE} pixels cropped:")
    for name, hr in images.items():
        model_db, bicubic_db = compare(model, hr, SCALE)
        print(f"  {name} {tuple(hr.shape[-2:])}: ESPCN {model_db:.2f} dB, "
              f"bicubic {bicubic_db:.2f} dB ({model_db - bicubic_db:+.2f} dB)")


if __name__ == "__main__":
    main()
