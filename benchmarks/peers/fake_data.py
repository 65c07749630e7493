"""Random data in hookforge_peer_data's format, for testing the peer scripts quickly:

    python fake_data.py DIR [--count N]     # N training samples (validation: 128)

Targets uniform in [0, 1], 48 x 48; input = 2 x 2 average pool of the target; bicubic =
torch's bicubic upscaling of the input (align_corners=False).
"""
import argparse
import json
import os

import torch
import torch.nn.functional as F


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dir")
    parser.add_argument("--count", type=int, default=4096)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    shapes = {}
    for split, count in (("train", args.count), ("val", 128)):
        target = torch.rand(count, 1, 48, 48, generator=g)
        inp = F.avg_pool2d(target, 2)
        bic = F.interpolate(inp, scale_factor=2, mode="bicubic", align_corners=False)
        for field, t in (("input", inp), ("target", target), ("bicubic", bic)):
            name = f"{split}_{field}"
            t.contiguous().numpy().astype("<f4").tofile(os.path.join(args.dir, name + ".f32"))
            shapes[name] = list(t.shape)
    with open(os.path.join(args.dir, "shapes.json"), "w") as f:
        json.dump(shapes, f)
    print(f"{args.dir}: {args.count} + 128 random samples")


if __name__ == "__main__":
    main()
