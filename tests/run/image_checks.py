#!/usr/bin/env python3
"""hookforge-run --check against image data that would fail only later (issue 38).

  image_checks.py BIN

Writes small PNG files and a config per case, runs `BIN CONFIG --check` and checks the exit
code and the one line it prints:
  case 2/3  max_pixels as a config key: an image above it is refused naming it, W x H;
  case 5    repeat and batch_size that would overflow what they multiply: located errors;
  case 6    a validation image too small for PSNR's crop_border or SSIM's window: refused at
            --check, naming the image and its size, width first;
  case 7    a dangling link under root: a warning, an error under --strict.
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

CONFIG = """\
system: {{seed: 0, threads: 1}}
data:
  train: {{_target: ImageFolder, params: {{root: "{train}", scale: 2, patch: 8{train_extra}}}}}
  val: {{_target: ImageFolder, params: {{root: "{val}", scale: 2{val_extra}}}}}
model: {{_target: ESPCN, params: {{scale: 2, channels: 3, features: 8}}}}
optimizer: {{_target: Adam, params: {{model: "${{ref:model}}", lr: 1.0e-3}}}}
trainer:
  _target: Trainer
  params:
    model: ${{ref:model}}
    training_runner: {{_target: TrainingEpochRunner, params: {{optimizer: "${{ref:optimizer}}"}}}}
    validation_runner:
      _target: ValidationEpochRunner
      params: {{metrics: [{metrics}]}}
    train_loader: {{_target: DataLoader, params: {{dataset: "${{ref:data.train}}", batch_size: {batch}}}}}
    val_loader: {{_target: DataLoader, params: {{dataset: "${{ref:data.val}}", batch_size: 1}}}}
    loss: {{_target: L1}}
    epochs: 1
"""


def write_png(path, width, height):
    """An 8-bit RGB PNG of a gradient."""
    rows = b"".join(b"\0" + bytes((x * 7 + y * 3 + c) % 256 for x in range(width) for c in range(3))
                    for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def check(binary, work, name, expect_code, fragment, extra_args=(), **settings):
    values = {"train_extra": "", "val_extra": "", "metrics": "{_target: PSNR}", "batch": 2,
              "train": os.path.join(work, "train"), "val": os.path.join(work, "val")}
    values.update(settings)
    config = os.path.join(work, name + ".yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(**values))
    p = subprocess.run([binary, config, "--check", *extra_args], capture_output=True, text=True,
                       errors="replace", timeout=300, cwd=work)
    said = (p.stdout + p.stderr).strip()
    if p.returncode != expect_code or fragment not in said:
        print(f"FAIL {name}: exit {p.returncode} (expected {expect_code}), expected '{fragment}' in:\n{said[-1500:]}")
        return False
    line = next((l for l in said.splitlines() if fragment in l), said)
    print(f"ok   {name}: exit {p.returncode}: {line.strip()}")
    return True


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as work:
        for folder in ("train", "val"):
            os.makedirs(os.path.join(work, folder))
        write_png(os.path.join(work, "train", "a.png"), 24, 20)
        write_png(os.path.join(work, "val", "big.png"), 40, 32)
        write_png(os.path.join(work, "val", "tiny.png"), 12, 10)
        tiny = os.path.join(work, "val", "tiny.png")
        results = [
            check(binary, work, "fits", 0, "warnings: none"),
            check(binary, work, "case6_psnr", 2,
                  f"PSNR 'psnr': crop_border 8 leaves nothing of the validation image '{tiny}', "
                  "whose 'target' is 12 x 10 pixels (it takes at least 17 x 17)",
                  metrics="{_target: PSNR, params: {crop_border: 8}}"),
            check(binary, work, "case6_ssim", 2,
                  f"SSIM 'ssim': crop_border 0 leaves less than its 11 x 11 window of the validation "
                  f"image '{tiny}', whose 'target' is 12 x 10 pixels (it takes at least 11 x 11)",
                  metrics="{_target: SSIM}"),
            check(binary, work, "case5_repeat", 2,
                  "data.train.params.repeat: expected a number of samples per file of at most 2147483648, "
                  "got '6148914691236517206'", train_extra=", repeat: 6148914691236517206"),
            check(binary, work, "case5_batch", 2,
                  "trainer.params.train_loader.params.batch_size: expected a batch size of at most "
                  "2147483648, got '4611686018427387904'", batch=4611686018427387904),
            check(binary, work, "max_pixels", 2,
                  f"{os.path.join(work, 'val', 'big.png')}: is 40 x 32 pixels (1280), more than "
                  "max_pixels (1000)", val_extra=", max_pixels: 1000"),
        ]
        os.symlink(os.path.join(work, "nowhere.png"), os.path.join(work, "train", "gone.png"))
        gone = os.path.join(work, "train", "gone.png")
        results += [
            check(binary, work, "case7_warning", 0,
                  f"ImageFolder: '{gone}' is a link to '{os.path.join(work, 'nowhere.png')}', which does not exist: skipped"),
            check(binary, work, "case7_strict", 2,
                  "trainer.params.train_loader: expected a dataset built without warnings (--strict), "
                  f"got ImageFolder: '{gone}' is a link to", extra_args=["--strict"]),
        ]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
