"""The default job in PyTorch Lightning.

    python lightning_job.py --data DIR --epochs E --work-dir W [--workers N]

Writes W/lightning_logs/version_0/{metrics.csv,hparams.yaml,checkpoints/}. Checkpoints: two
ModelCheckpoint callbacks, as Lightning's docs do it: the last 2 epochs (save_top_k=2 on
"step", mode max) and the best by val_psnr (save_top_k=1, mode max).

Metrics: torchmetrics. PeakSignalNoiseRatio(dim=(1, 2, 3)) is per sample, averaged, as in
common.psnr. StructuralSimilarityIndexMeasure (Gaussian 11 x 11, sigma 1.5, K1 0.01, K2 0.03
by default) reflect-pads the images and averages the SSIM map over the whole image, where
common.ssim averages the "valid" windows only; it also clamps the variances at 0.
"""
import torch

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

import time  # noqa: E402

import pytorch_lightning as pl  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint, ModelSummary, TQDMProgressBar  # noqa: E402
from pytorch_lightning.loggers import CSVLogger  # noqa: E402
from torchmetrics.image import PeakSignalNoiseRatio, StructuralSimilarityIndexMeasure  # noqa: E402

import common  # noqa: E402


class SuperResolution(pl.LightningModule):
    def __init__(self, epochs):
        super().__init__()
        self.save_hyperparameters()
        self.model = common.ESPCN(scale=2, channels=1, features=64)
        self.val_psnr = PeakSignalNoiseRatio(data_range=1.0, reduction="elementwise_mean", dim=(1, 2, 3))
        self.val_ssim = StructuralSimilarityIndexMeasure(data_range=1.0)
        self.val_bicubic_psnr = PeakSignalNoiseRatio(data_range=1.0, reduction="elementwise_mean", dim=(1, 2, 3))
        self.val_bicubic_ssim = StructuralSimilarityIndexMeasure(data_range=1.0)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss, on_epoch=True, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y, bicubic = batch
        out = self(x)
        self.log("val_loss", F.mse_loss(out, y))
        self.val_psnr(out, y)
        self.val_ssim(out, y)
        self.val_bicubic_psnr(bicubic, y)
        self.val_bicubic_ssim(bicubic, y)
        self.log("val_psnr", self.val_psnr, prog_bar=True)
        self.log("val_ssim", self.val_ssim)
        self.log("val_bicubic_psnr", self.val_bicubic_psnr)
        self.log("val_bicubic_ssim", self.val_bicubic_ssim)

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=self.hparams.epochs, eta_min=1e-5)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "epoch"}}


def main():
    args = common.parse_args(__doc__)
    train_loader, val_loader = common.loaders(args)

    start = time.perf_counter()
    torch.manual_seed(0)
    model = SuperResolution(args.epochs)
    trainer = pl.Trainer(
        max_epochs=args.epochs, accelerator="cpu", devices=1, default_root_dir=args.work_dir,
        logger=CSVLogger(args.work_dir),
        callbacks=[
            ModelCheckpoint(monitor="step", mode="max", save_top_k=2, filename="{epoch}-{step}"),
            ModelCheckpoint(monitor="val_psnr", mode="max", save_top_k=1, filename="best-{epoch}-{val_psnr:.4f}"),
            EarlyStopping(monitor="val_psnr", mode="max", patience=3),
            # Lightning's defaults when `rich` is not installed (it is a dependency of MMEngine's
            # here, not of Lightning's; with it Lightning would pick the Rich bar and summary)
            TQDMProgressBar(), ModelSummary(),
        ])
    trainer.fit(model, train_loader, val_loader)
    seconds = time.perf_counter() - start
    metrics = trainer.callback_metrics
    common.print_result("Lightning", args.epochs, seconds, metrics["val_psnr"], metrics["val_bicubic_psnr"])


if __name__ == "__main__":
    main()
