"""The training step of benchmarks/gpu_step.cpp in PyTorch: a plain loop and Lightning's
Trainer.fit, the same models, batches, optimiser and timing.

    python3 benchmarks/gpu_step.py [--device cuda|cpu] [--rounds N] [--steps S] [--warmup W]

Two models: a 64 -> 64 -> 1 MLP (batch 32) and ESPCN x2 (conv 5x5 64, tanh, conv 3x3 32,
tanh, conv 3x3 4, pixel shuffle; batch 16, 48x48 inputs), SGD(lr 0.01, momentum 0.9),
S batches made beforehand on the device. One round times one epoch of S steps of the plain
loop; W rounds are warm-up. Lightning then runs one fit of W + R epochs, each epoch timed by a
callback (a fit per round would time its set-up too). On CUDA an epoch is timed with CUDA events
(torch.cuda.Event), on the CPU with the host clock. Lightning runs with its progress bar,
logger, checkpointing and model summary off: its loop alone (hookforge's defaults write to
a discarding stream in gpu_step.cpp). Lightning is skipped, saying so, where it is not
installed. Prints one table per model, as gpu_step.cpp does.
"""
import argparse
import statistics
import time

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(64, 64), nn.Linear(64, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Espcn(nn.Module):
    def __init__(self, scale=2, features=64):
        super().__init__()
        self.c1 = nn.Conv2d(1, features, 5, padding=2)
        self.c2 = nn.Conv2d(features, features // 2, 3, padding=1)
        self.c3 = nn.Conv2d(features // 2, scale * scale, 3, padding=1)
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, x):
        return self.shuffle(self.c3(torch.tanh(self.c2(torch.tanh(self.c1(x))))))


def timed(device, epoch):
    """Microseconds of one call of `epoch`."""
    if device.type == "cuda":
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        epoch()
        stop.record()
        stop.synchronize()
        return 1000.0 * start.elapsed_time(stop)
    t0 = time.perf_counter()
    epoch()
    return 1e6 * (time.perf_counter() - t0)


def sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def plain(make, batches):
    model = make()
    optimizer = sgd(model)

    def epoch(_):
        model.train()
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        torch.stack(losses).mean().item()

    return epoch


def lightning(make, batches, device):
    try:
        import lightning as L
    except ImportError:
        try:
            import pytorch_lightning as L
        except ImportError:
            return None

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.model = make()

        def training_step(self, batch, _):
            x, y = batch
            return nn.functional.mse_loss(self.model(x), y)

        def configure_optimizers(self):
            return sgd(self.model)

    module = Module()
    accelerator = "gpu" if device.type == "cuda" else "cpu"

    # One fit whose epochs are the rounds (a fit per round would time Lightning's set-up):
    # a callback times each epoch.
    class EpochTimes(L.Callback):
        def __init__(self):
            self.per_epoch = []
            self.start = None

        def on_train_epoch_start(self, trainer, pl_module):
            if device.type == "cuda":
                self.start = torch.cuda.Event(enable_timing=True)
                self.start.record()
            else:
                self.start = time.perf_counter()

        def on_train_epoch_end(self, trainer, pl_module):
            if device.type == "cuda":
                stop = torch.cuda.Event(enable_timing=True)
                stop.record()
                stop.synchronize()
                self.per_epoch.append(1000.0 * self.start.elapsed_time(stop))
            else:
                self.per_epoch.append(1e6 * (time.perf_counter() - self.start))

    def fit(epochs):
        times = EpochTimes()
        trainer = L.Trainer(max_epochs=epochs, accelerator=accelerator, devices=1,
                            enable_progress_bar=False, logger=False, enable_checkpointing=False,
                            enable_model_summary=False, callbacks=[times])
        trainer.fit(module, train_dataloaders=Batches(batches))
        return times.per_epoch

    return fit


class Batches:
    """The prepared batches as one loader (a plain list would be taken for a list of loaders)."""

    def __init__(self, batches):
        self.batches = batches

    def __iter__(self):
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)


def row(name, per_step, plain_median, syncs="-"):
    m = statistics.median(per_step)
    return (f"| {name} | {m:.1f} | {min(per_step):.1f}-{max(per_step):.1f} | "
            f"{m / plain_median:.3f} | {syncs} |")


def measure(title, make, batches, args, device):
    variants = {"pytorch/plain": plain(make, batches)}
    per_step = {name: [] for name in variants}
    for round_ in range(args.warmup + args.rounds):
        for name, epoch in variants.items():
            us = timed(device, lambda: epoch(round_))
            if round_ >= args.warmup:
                per_step[name].append(us / args.steps)
    fit = lightning(make, batches, device)
    if fit is not None:
        per_epoch = fit(args.warmup + args.rounds)
        per_step["lightning/fit"] = [us / args.steps for us in per_epoch[args.warmup:]]
    print(f"\n{title}, {device}, {args.steps} steps x {args.rounds} rounds "
          f"(after {args.warmup} warm-up rounds)\n")
    print("| variant | median us/step | spread (min-max) | ratio to plain | syncs/epoch |")
    print("|---|---:|---:|---:|---:|")
    base = statistics.median(per_step["pytorch/plain"])
    for name, times in per_step.items():
        print(row(name, times, base))
    if fit is None:
        print("\n(lightning/fit: skipped, Lightning is not installed here)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("no CUDA device here; run with --device cpu")
    torch.manual_seed(0)
    mlp = [(torch.randn(32, 64, device=device), torch.randn(32, 1, device=device))
           for _ in range(args.steps)]
    sr = [(torch.rand(16, 1, 48, 48, device=device), torch.rand(16, 1, 96, 96, device=device))
          for _ in range(args.steps)]

    def make(cls):
        def build():
            torch.manual_seed(1)
            return cls().to(device)
        return build

    measure("MLP 64-64-1, batch 32", make(Mlp), mlp, args, device)
    measure("ESPCN x2, batch 16, 48x48", make(Espcn), sr, args, device)


if __name__ == "__main__":
    main()
