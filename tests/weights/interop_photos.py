"""Photographs for the ESPCN cases of interop.py: scikit-image's sample photographs (Debian's
python3-skimage ships them), decoded here (the Python of scripts/peers.sh has neither
scikit-image nor Pillow), their Y channel and its low-resolution image as hookforge's
ImageFolder makes them (docs/data.md).
"""
import os
import struct
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SR_PHOTOS = os.path.join(HERE, "..", "..", "configs", "sr_photos.yaml")
DEBIAN_PHOTOS = "/usr/lib/python3/dist-packages/skimage/data"  # Debian's python3-skimage


def _unfilter(kind, line, prev, bpp):
    """A PNG scanline's bytes from its filtered bytes `line` (uint8) and the row above."""
    if kind == 0:
        return line
    if kind == 1:  # Sub: a running sum per channel
        return (np.cumsum(line.reshape(-1, bpp).astype(np.int64), axis=0) % 256).astype(
            np.uint8).reshape(-1)
    if kind == 2:  # Up
        return line + prev
    out, line, prev = [0] * len(line), line.tolist(), prev.tolist()  # Average, Paeth: in order
    for x in range(len(line)):
        a, b = (out[x - bpp] if x >= bpp else 0), prev[x]
        if kind == 3:
            out[x] = (line[x] + (a + b) // 2) & 255
        else:
            c = prev[x - bpp] if x >= bpp else 0
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            out[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    return np.array(out, np.uint8)


def read_png(path):
    """An 8-bit, non-interlaced grayscale or RGB PNG as a uint8 array, [H, W] or [H, W, 3]."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (0, 2) or interlace:
                raise ValueError(f"{path} is not an 8-bit, non-interlaced grayscale or RGB PNG")
        elif kind == b"IDAT":
            idat += body
    bpp = 3 if color == 2 else 1
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, width * bpp + 1)
    image, prev = np.zeros((height, width * bpp), np.uint8), np.zeros(width * bpp, np.uint8)
    for y in range(height):
        prev = image[y] = _unfilter(raw[y, 0], raw[y, 1:], prev, bpp)
    return image.reshape(height, width, 3) if bpp == 3 else image


def photograph():
    """Two 48x48 crops of scikit-image's camera as [2, 1, 48, 48] in [0, 1], and where from."""
    try:
        import skimage.data
        image, source = skimage.data.camera(), "scikit-image's camera"
    except ImportError:
        path = os.path.join(DEBIAN_PHOTOS, "camera.png")
        if os.path.exists(path):
            image, source = read_png(path), f"scikit-image's camera ({path})"
        else:
            gen = torch.Generator().manual_seed(8)
            return torch.rand(2, 1, 48, 48, generator=gen), \
                "random images (seed 8): no scikit-image here (Debian: python3-skimage)"
    crops = [image[70:118, 130:178], image[260:308, 260:308]]  # the head, the tripod
    return torch.from_numpy(np.stack(crops)[:, None].astype(np.float32) / 255), source


def luma(image):
    """The Y of ITU-R BT.601 YCbCr, studio range, in [0, 1] as [H, W] float32, as ImageFolder's
    `color: y` makes it (a gray file is its gray value in R, G and B)."""
    rgb = image.astype(np.float64) / 255
    if rgb.ndim == 2:
        rgb = np.repeat(rgb[..., None], 3, axis=2)
    y = (16 + 65.481 * rgb[..., 0] + 128.553 * rgb[..., 1] + 24.966 * rgb[..., 2]) / 255
    return torch.from_numpy(y.astype(np.float32))


def high_and_low(path, scale):
    """The HR Y of the photograph at `path`, cropped to a multiple of `scale`, and its LR:
    interpolate(..., 1/scale, bicubic, antialias) rounded to 8 bits; each [1, 1, H, W]."""
    y = luma(read_png(path))
    h, w = y.shape[0] // scale * scale, y.shape[1] // scale * scale
    hr = y[:h, :w][None, None]
    lr = torch.nn.functional.interpolate(hr, scale_factor=1 / scale, mode="bicubic",
                                         antialias=True, align_corners=False)
    return hr, (lr.clamp(0, 1) * 255).round() / 255
