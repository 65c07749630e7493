"""hookforge's ESPCN in plain PyTorch, and what train_espcn.py and evaluate.py share.

ESPCN is include/hookforge/torch/models/espcn.hpp layer for layer, under the same names
(conv1, conv2, conv3), so a state_dict moves between the two without renaming:

    conv 5x5  channels     -> features       tanh
    conv 3x3  features     -> features / 2   tanh
    conv 3x3  features / 2 -> channels * scale^2
    pixel_shuffle(scale)
    residual: + bicubic(input) (align_corners=False, not clamped); conv3 starts at zero

The images are degraded as hookforge's ProceduralImages degrades its own
(include/hookforge/torch/data/procedural_images.hpp): the low-resolution image is the mean
of each scale x scale block of the high-resolution one, so a model fine-tuned in C++ on
those images keeps the task it learnt here.
"""

import torch
from torch import nn
from torch.nn import functional as F


class ESPCN(nn.Module):
    def __init__(self, scale=2, channels=1, features=64, residual=False):
        super().__init__()
        self.scale = scale
        self.residual = residual
        self.conv1 = nn.Conv2d(channels, features, 5, padding=2)
        self.conv2 = nn.Conv2d(features, features // 2, 3, padding=1)
        self.conv3 = nn.Conv2d(features // 2, channels * scale * scale, 3, padding=1)
        if residual:  # the untrained network is exactly bicubic
            nn.init.zeros_(self.conv3.weight)
            nn.init.zeros_(self.conv3.bias)

    def forward(self, x):
        y = torch.tanh(self.conv1(x))
        y = torch.tanh(self.conv2(y))
        y = F.pixel_shuffle(self.conv3(y), self.scale)
        if self.residual:
            y = y + bicubic(x, self.scale)
        return y


def bicubic(x, scale):
    """x upscaled by `scale`, bicubic, as hookforge's ESPCNImpl::bicubic (not clamped)."""
    return F.interpolate(x, scale_factor=scale, mode="bicubic", align_corners=False)


def downscale(hr, scale):
    """The mean of each scale x scale block (box / area downscaling), as ProceduralImages."""
    return F.avg_pool2d(hr, scale)


def luma(rgb):
    """BT.601 Y in studio range of [3, H, W] RGB in [0, 1], as hookforge's bt601_y: [1, H, W]."""
    weights = torch.tensor([65.481, 128.553, 24.966]).view(3, 1, 1) / 255
    return (rgb * weights).sum(0, keepdim=True) + 16 / 255


def to_gray(array):
    """An 8-bit image (NumPy, [H, W] or [H, W, 3]) as a [1, H, W] float tensor in [0, 1]:
    itself when grayscale, its Y channel when colour."""
    image = torch.tensor(array, dtype=torch.float32) / 255
    return image.unsqueeze(0) if image.dim() == 2 else luma(image.permute(2, 0, 1)[:3])


def skimage_photographs(names):
    """scikit-image's photographs `names` ([1, H, W] in [0, 1], see to_gray), skipping those
    this scikit-image cannot give; empty when scikit-image is not importable."""
    try:
        import skimage.data
    except ImportError:
        return {}
    images = {}
    for name in names:
        try:
            images[name] = to_gray(getattr(skimage.data, name)())
        except Exception:  # a newer scikit-image downloads some; no network, no image
            pass
    return images


def smooth_random_images(count, size, seed):
    """`count` [1, size, size] images in [0, 1]: random noise at an eighth of the size,
    upscaled bicubic, stretched to [0, 1], with a few sharp-edged discs (the stand-in for
    photographs where scikit-image is missing)."""
    g = torch.Generator().manual_seed(seed)
    low = torch.rand(count, 1, size // 8, size // 8, generator=g)
    images = F.interpolate(low, size=(size, size), mode="bicubic", align_corners=False)
    lo = images.amin(dim=(2, 3), keepdim=True)
    hi = images.amax(dim=(2, 3), keepdim=True)
    images = (images - lo) / (hi - lo)
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    for image in images:
        for _ in range(4):
            cy, cx, r = (torch.rand(3, generator=g) * torch.tensor([size, size, size / 4])).tolist()
            image[0][(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = torch.rand(1, generator=g).item()
    return list(images)


def psnr(x, y, crop_border):
    """PSNR in dB of two [1, H, W] images in [0, 1], `crop_border` pixels off each edge."""
    c = crop_border
    mse = (x[..., c:-c, c:-c] - y[..., c:-c, c:-c]).square().mean()
    return (10 * torch.log10(1 / mse)).item()


@torch.no_grad()
def compare(model, hr, scale):
    """(model's PSNR, bicubic's PSNR) on HR image `hr` [1, H, W] in [0, 1], degraded by
    `downscale`; the outputs clamped to [0, 1], `scale` pixels cropped off each edge."""
    h, w = hr.shape[-2] // scale * scale, hr.shape[-1] // scale * scale
    hr = hr[..., :h, :w]
    lr = downscale(hr.unsqueeze(0), scale)
    sr = model(lr)[0].clamp(0, 1)
    up = bicubic(lr, scale)[0].clamp(0, 1)
    return psnr(sr, hr, scale), psnr(up, hr, scale)
