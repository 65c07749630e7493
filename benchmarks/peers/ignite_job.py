"""The default job in PyTorch-Ignite.

    python ignite_job.py --data DIR --epochs E --work-dir W [--workers N]

Writes W/metrics.csv (one line per epoch) and W/checkpoints/: checkpoint_K.pt (ModelCheckpoint,
n_saved=2, every epoch) and best_checkpoint_K_psnr=*.pt (Checkpoint, n_saved=1, by val PSNR);
EarlyStopping on val PSNR, patience 3; LRScheduler(CosineAnnealingLR) after each epoch.

Metrics: ignite.metrics. PSNR is per sample, averaged (as common.psnr; it adds 1e-10 to the
MSE). SSIM (Gaussian 11 x 11, sigma 1.5, K1 0.01, K2 0.03 by default) reflect-pads the images
and averages the SSIM map over the whole image, where common.ssim averages the "valid"
windows only.
"""
import torch

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

import csv  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

from ignite.engine import Events, create_supervised_evaluator, create_supervised_trainer  # noqa: E402
from ignite.handlers import (Checkpoint, DiskSaver, EarlyStopping, LRScheduler, ModelCheckpoint,  # noqa: E402
                             ProgressBar, global_step_from_engine)
from ignite.metrics import PSNR, SSIM, Average, Loss  # noqa: E402

import common  # noqa: E402


def main():
    args = common.parse_args(__doc__)
    train_loader, val_loader = common.loaders(args)
    ckpt_dir = os.path.join(args.work_dir, "checkpoints")

    start = time.perf_counter()
    torch.manual_seed(0)
    model = common.ESPCN(scale=2, channels=1, features=64)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = torch.nn.MSELoss()
    trainer = create_supervised_trainer(model, optimizer, criterion)

    # A validation batch is (input, target, bicubic): y carries the target and the bicubic baseline.
    # (PSNR and SSIM take y_pred and y from the dict; Loss also wants criterion_kwargs there.)
    bicubic = lambda out: (out["bicubic"], out["y"])  # noqa: E731
    evaluator = create_supervised_evaluator(
        model,
        metrics={"loss": Loss(criterion, output_transform=lambda out: (out["y_pred"], out["y"])),
                 "psnr": PSNR(data_range=1.0), "ssim": SSIM(data_range=1.0),
                 "bicubic_psnr": PSNR(data_range=1.0, output_transform=bicubic),
                 "bicubic_ssim": SSIM(data_range=1.0, output_transform=bicubic)},
        prepare_batch=lambda batch, device, non_blocking: (batch[0], (batch[1], batch[2])),
        output_transform=lambda x, y, y_pred: {"y_pred": y_pred, "y": y[0], "bicubic": y[1]})

    Average().attach(trainer, "train_loss")
    ProgressBar().attach(trainer, output_transform=lambda loss: {"loss": loss})
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs, eta_min=1e-5)

    log = open(os.path.join(args.work_dir, "metrics.csv"), "w", newline="")
    writer = csv.writer(log)
    names = ["loss", "psnr", "ssim", "bicubic_psnr", "bicubic_ssim"]
    writer.writerow(["epoch", "lr", "train_loss"] + [f"val_{n}" for n in names])

    @trainer.on(Events.EPOCH_COMPLETED)
    def log_validation_results(engine):
        evaluator.run(val_loader)
        metrics = evaluator.state.metrics
        writer.writerow([engine.state.epoch, optimizer.param_groups[0]["lr"], engine.state.metrics["train_loss"]]
                        + [metrics[n] for n in names])
        log.flush()
        print(f"Validation Results - Epoch: {engine.state.epoch} "
              + " ".join(f"{n}: {metrics[n]:.4f}" for n in names), flush=True)

    # use_legacy=True on EPOCH_COMPLETED: the documented use_legacy=False before the epoch
    # (EPOCH_STARTED) asks CosineAnnealingLR.get_lr() for epoch 0 outside its constructor, which
    # torch 2.11 answers with its recursive formula: a first epoch above 1e-3 (1.99e-3 for T_max 2).
    trainer.add_event_handler(Events.EPOCH_COMPLETED, LRScheduler(scheduler, use_legacy=True))
    to_save = {"model": model, "optimizer": optimizer, "scheduler": scheduler}
    trainer.add_event_handler(Events.EPOCH_COMPLETED,
                              ModelCheckpoint(ckpt_dir, "", n_saved=2, require_empty=False), to_save)
    psnr = lambda engine: engine.state.metrics["psnr"]  # noqa: E731
    evaluator.add_event_handler(Events.COMPLETED, Checkpoint(
        to_save, DiskSaver(ckpt_dir, require_empty=False), filename_prefix="best", n_saved=1,
        score_function=psnr, score_name="psnr", global_step_transform=global_step_from_engine(trainer)))
    evaluator.add_event_handler(Events.COMPLETED, EarlyStopping(patience=3, score_function=psnr, trainer=trainer))

    trainer.run(train_loader, max_epochs=args.epochs)
    log.close()
    seconds = time.perf_counter() - start
    common.print_result("Ignite", args.epochs, seconds, evaluator.state.metrics["psnr"],
                        evaluator.state.metrics["bicubic_psnr"])


if __name__ == "__main__":
    main()
