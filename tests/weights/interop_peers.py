"""The peers' checkpoints for interop.py: lightning_ckpt (a real Lightning Trainer.fit .ckpt)
and mmengine_ckpt (a real MMEngine Runner's epoch_1.pth), read by hookforge as their
'state_dict' entry.
"""
import glob
import logging
import os
import sys
import tempfile
import types
import warnings

import torch
from torch import nn

from interop_common import compare, fail, hookforge_read, probe

# --- checkpoints of Lightning and MMEngine -------------------------------------------------------

def quiet():
    """Lightning's and MMEngine's notes off (after their import: Lightning sets its level then)."""
    warnings.filterwarnings("ignore")
    for name in ["pytorch_lightning", "lightning.pytorch", "lightning_fabric", "lightning"]:
        logging.getLogger(name).setLevel(logging.ERROR)


def samples(n=16):
    gen = torch.Generator().manual_seed(2)
    return torch.randn(n, 4, generator=gen), torch.randn(n, 1, generator=gen)


def check_entry(label, got, file, entry, others):
    if got.entry != entry or f"entry '{entry}'" not in got.describe:
        fail(f"{label}: hookforge took the entry '{got.entry}' ({got.describe}), not '{entry}'")
    for other in others:
        if other not in got.others or other not in got.describe:
            fail(f"{label}: describe() should name the other entry '{other}': {got.describe} "
                 f"(other entries: {got.others})")


def check_lightning_ckpt(work):
    import pytorch_lightning as pl
    quiet()

    class Regressor(pl.LightningModule):
        def __init__(self, lr=0.05, hidden=8):
            super().__init__()
            self.save_hyperparameters()
            self.net = nn.Sequential(nn.Linear(4, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                                     nn.Linear(hidden, 1))

        def training_step(self, batch, _):
            x, y = batch
            loss = nn.functional.mse_loss(self.net(x), y)
            self.log("loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)

    torch.manual_seed(3)
    model = Regressor()
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*samples()), batch_size=4)
    trainer = pl.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_progress_bar=False,
                         enable_model_summary=False, default_root_dir=work)
    trainer.fit(model, data)
    files = glob.glob(os.path.join(work, "checkpoints", "*.ckpt"))
    if len(files) != 1:
        fail(f"Lightning's Trainer.fit should have written one checkpoint: {files}")
    file = files[0]
    stored = torch.load(file, weights_only=False)["state_dict"]
    want = list(stored.items())
    if not want or not all(name.startswith("net.") for name, _ in want):
        fail(f"{file}: Lightning's state_dict should hold 'net.' names: {list(stored)}")
    for name, t in model.state_dict().items():
        if not torch.equal(stored[name], t):
            fail(f"{file}: Lightning stored '{name}' unlike the trained model's")
    for key in [None, "state_dict"]:
        label = f"Lightning's {os.path.basename(file)}" + (f", key '{key}'" if key else "")
        got = hookforge_read(file, work, key)
        compare(label, got, want)
        check_entry(label, got, file, "state_dict", ["optimizer_states"])
    out = tempfile.mkdtemp(dir=work)
    p = probe("read", file, out, "no_such_entry", expect=3)
    if "no_such_entry" not in p.stderr or "state_dict" not in p.stderr:
        fail(f"{file}, key 'no_such_entry': the error should name the key and those the file "
             f"has: {p.stderr.strip()}")
    print(f"lightning_ckpt: the .ckpt of Lightning {pl.__version__}'s Trainer.fit, read by "
          f"hookforge: entry 'state_dict' ({len(want)} 'net.' tensors) bit for bit, found and by "
          f"key, the others named ({got.describe}); a key it lacks refused naming those it has")


def mmengine_modules():
    """mmengine-lite without OpenCV and Matplotlib: cv2 stubbed (a hook imports it, the runner
    sets its threads), and a Visualizer without a figure."""
    cv2 = types.ModuleType("cv2")
    cv2.setNumThreads = lambda n: None
    cv2.__version__ = "absent (stubbed by tests/weights/interop_peers.py)"
    sys.modules.setdefault("cv2", cv2)
    from mmengine.visualization import Visualizer

    class NoFigure(Visualizer):
        def _initialize_fig(self, cfg):
            return None, types.SimpleNamespace(get_dpi=lambda: 100), None

    return NoFigure


def check_mmengine_ckpt(work):
    NoFigure = mmengine_modules()
    import mmengine
    from mmengine.model import BaseModel
    from mmengine.runner import Runner
    quiet()

    class Regressor(BaseModel):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))

        def forward(self, x, y, mode="tensor"):
            out = self.net(x)
            return {"loss": nn.functional.mse_loss(out, y)} if mode == "loss" else out

    class Samples(torch.utils.data.Dataset):
        def __init__(self):
            self.x, self.y = samples()

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            return dict(x=self.x[i], y=self.y[i])

    runner = Runner(
        model=Regressor(), work_dir=work,
        train_dataloader=dict(dataset=Samples(), batch_size=4,
                              collate_fn=dict(type="default_collate"),
                              sampler=dict(type="DefaultSampler", shuffle=False)),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.05, momentum=0.9)),
        param_scheduler=dict(type="MultiStepLR", milestones=[1], by_epoch=True),
        train_cfg=dict(by_epoch=True, max_epochs=1),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1)),
        randomness=dict(seed=4), log_level="ERROR",
        visualizer=NoFigure.get_instance("interop"))
    runner.train()
    file = os.path.join(work, "epoch_1.pth")
    checkpoint = torch.load(file, weights_only=False)
    want = list(checkpoint["state_dict"].items())
    model = runner.model.state_dict()
    if [n for n, _ in want] != list(model) or not all(torch.equal(t, model[n]) for n, t in want):
        fail(f"{file}: MMEngine's state_dict should be the trained model's")
    try:
        torch.load(file, weights_only=True)
        python_refuses = "reads it too"
    except Exception:  # HistoryBuffer, NumPy's arrays and getattr in the message hub
        python_refuses = "refuses it"
    for key in [None, "state_dict"]:
        label = f"MMEngine's {os.path.basename(file)}" + (f", key '{key}'" if key else "")
        got = hookforge_read(file, work, key)
        compare(label, got, want)
        check_entry(label, got, file, "state_dict", ["optimizer"])
    print(f"mmengine_ckpt: epoch_1.pth of MMEngine {mmengine.__version__}'s Runner, read by "
          f"hookforge: entry 'state_dict' ({len(want)} tensors) bit for bit, equal to the "
          f"model's, found and by key ({got.describe}), its message hub's NumPy arrays, "
          f"HistoryBuffers and getattr passed over (Python's torch.load(weights_only=True) "
          f"{python_refuses})")
