"""The default job in MMEngine (mmengine-lite).

    python mmengine_job.py --data DIR --epochs E --work-dir W [--workers N]

Writes W/epoch_K.pth (the last 2), W/best_psnr_epoch_K.pth, W/last_checkpoint and
W/<timestamp>/ (the text log, vis_data/scalars.json: the logged scalars, one JSON line each).
MMEngine's default hooks, but for CheckpointHook(interval=1, max_keep_ckpts=2,
save_best='psnr', rule='greater'); EarlyStoppingHook(monitor='psnr', rule='greater',
patience=3, min_delta=0): MMEngine's min_delta defaults to 0.1, Lightning's, Ignite's and
hookforge's to 0. The metric is a BaseMetric on common.psnr / common.ssim, as in plain.py;
like MMEngine's docs it keeps one entry per batch and weighs them by the batch size.
"""
import torch

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402

import torch.nn.functional as F  # noqa: E402

# mmengine-lite ships without OpenCV, but its visualisation modules import cv2 (only their image
# functions use it): a stub while MMEngine loads, removed afterwards so that MMEngine's own
# `try: import cv2` (the environment report, mp_cfg's opencv_num_threads) sees no OpenCV.
_stub = "cv2" not in sys.modules
if _stub:
    sys.modules["cv2"] = types.ModuleType("cv2")
from mmengine.evaluator import BaseMetric  # noqa: E402
from mmengine.model import BaseModel  # noqa: E402
from mmengine.runner import Runner  # noqa: E402
from mmengine.visualization import Visualizer  # noqa: E402

if _stub:
    del sys.modules["cv2"]

import common  # noqa: E402


class SuperResolution(BaseModel):
    def __init__(self):
        super().__init__()
        self.net = common.ESPCN(scale=2, channels=1, features=64)

    def forward(self, inputs, targets, bicubic=None, mode="tensor"):
        out = self.net(inputs)
        if mode == "loss":
            return {"loss": F.mse_loss(out, targets)}
        if mode == "predict":
            return out, targets, bicubic
        return out


class ScalarVisualizer(Visualizer):
    """MMEngine's default Visualizer (LocalVisBackend: vis_data/scalars.json), less the
    matplotlib figure it draws images on: mmengine-lite does not require matplotlib, this venv
    has none, and this job draws no image."""

    def _initialize_fig(self, fig_cfg):
        return None, types.SimpleNamespace(get_dpi=lambda: 100), None


class SRMetric(BaseMetric):
    """Val loss, PSNR and SSIM of the output and of bicubic upscaling, against the target."""

    def process(self, data_batch, data_samples):
        out, target, bicubic = data_samples
        self.results.append({
            "batch_size": len(out),
            "loss": F.mse_loss(out, target).item() * len(out),
            "psnr": common.psnr(out, target).sum().item(),
            "ssim": common.ssim(out, target).sum().item(),
            "bicubic_psnr": common.psnr(bicubic, target).sum().item(),
            "bicubic_ssim": common.ssim(bicubic, target).sum().item(),
        })

    def compute_metrics(self, results):
        total = sum(r["batch_size"] for r in results)
        return {k: sum(r[k] for r in results) / total
                for k in ("loss", "psnr", "ssim", "bicubic_psnr", "bicubic_ssim")}


def main():
    args = common.parse_args(__doc__)
    train_loader, val_loader = common.loaders(args)

    start = time.perf_counter()
    torch.manual_seed(0)
    model = SuperResolution()
    runner = Runner(
        model=model,
        work_dir=args.work_dir,
        train_dataloader=train_loader,
        val_dataloader=val_loader,
        optim_wrapper=dict(optimizer=dict(type="Adam", lr=1e-3)),
        param_scheduler=dict(type="CosineAnnealingLR", T_max=args.epochs, eta_min=1e-5, by_epoch=True),
        train_cfg=dict(by_epoch=True, max_epochs=args.epochs, val_interval=1),
        val_cfg=dict(),
        val_evaluator=dict(type=SRMetric),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1, max_keep_ckpts=2,
                                           save_best="psnr", rule="greater")),
        custom_hooks=[dict(type="EarlyStoppingHook", monitor="psnr", rule="greater", patience=3, min_delta=0.0)],
        visualizer=dict(type=ScalarVisualizer, vis_backends=[dict(type="LocalVisBackend")]),
        launcher="none",
        env_cfg=dict(cudnn_benchmark=False, mp_cfg=dict(mp_start_method="fork", opencv_num_threads=0),
                     dist_cfg=dict(backend="gloo")),
    )
    runner.train()
    seconds = time.perf_counter() - start
    hub = runner.message_hub
    common.print_result("MMEngine", args.epochs, seconds, hub.get_scalar("val/psnr").current(),
                        hub.get_scalar("val/bicubic_psnr").current())


if __name__ == "__main__":
    main()
