"""The default job as a plain PyTorch loop, no framework.

    python plain.py --data DIR --epochs E --work-dir W [--workers N]

W/metrics.csv (one line per epoch), W/checkpoints/epoch_K.pt (the last 2) and best.pt (by
val PSNR); early stopping on val PSNR, patience 3.
"""
import torch

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

import csv  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import torch.nn.functional as F  # noqa: E402

import common  # noqa: E402


def save(state, path):
    torch.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def main():
    args = common.parse_args(__doc__)
    train_loader, val_loader = common.loaders(args)
    ckpt_dir = os.path.join(args.work_dir, "checkpoints")
    os.makedirs(ckpt_dir, exist_ok=True)

    start = time.perf_counter()
    torch.manual_seed(0)
    model = common.ESPCN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs, eta_min=1e-5)

    log = open(os.path.join(args.work_dir, "metrics.csv"), "w", newline="")
    writer = csv.writer(log)
    writer.writerow(["epoch", "lr", "train_loss", "val_loss", "val_psnr", "val_ssim", "val_bicubic_psnr",
                     "val_bicubic_ssim"])
    best, bad_epochs = float("-inf"), 0
    steps = len(train_loader)
    for epoch in range(1, args.epochs + 1):
        model.train()
        train_loss, seen = 0.0, 0
        for step, (x, y) in enumerate(train_loader, 1):
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            train_loss += loss.item() * len(x)
            seen += len(x)
            if step % 64 == 0:
                print(f"epoch {epoch}/{args.epochs} step {step}/{steps} loss {loss.item():.6f}", flush=True)

        model.eval()
        sums = dict(val_loss=0.0, val_psnr=0.0, val_ssim=0.0, val_bicubic_psnr=0.0, val_bicubic_ssim=0.0)
        count = 0
        with torch.no_grad():
            for x, y, b in val_loader:
                out = model(x)
                sums["val_loss"] += F.mse_loss(out, y).item() * len(x)
                sums["val_psnr"] += common.psnr(out, y).sum().item()
                sums["val_ssim"] += common.ssim(out, y).sum().item()
                sums["val_bicubic_psnr"] += common.psnr(b, y).sum().item()
                sums["val_bicubic_ssim"] += common.ssim(b, y).sum().item()
                count += len(x)
        scores = {k: v / count for k, v in sums.items()}
        lr = optimizer.param_groups[0]["lr"]
        scheduler.step()

        writer.writerow([epoch, lr, train_loss / seen] + [scores[k] for k in sums])
        log.flush()
        print(f"epoch {epoch}: train_loss {train_loss / seen:.6f} "
              + " ".join(f"{k} {v:.4f}" for k, v in scores.items()), flush=True)

        state = dict(epoch=epoch, model=model.state_dict(), optimizer=optimizer.state_dict(),
                     scheduler=scheduler.state_dict())
        save(state, os.path.join(ckpt_dir, f"epoch_{epoch}.pt"))
        old = os.path.join(ckpt_dir, f"epoch_{epoch - 2}.pt")
        if os.path.exists(old):
            os.remove(old)
        if scores["val_psnr"] > best:
            best, bad_epochs = scores["val_psnr"], 0
            save(state, os.path.join(ckpt_dir, "best.pt"))
        else:
            bad_epochs += 1
            if bad_epochs >= 3:
                print(f"early stopping: no better val_psnr for 3 epochs (best {best:.4f})", flush=True)
                break
    log.close()
    seconds = time.perf_counter() - start
    common.print_result("plain PyTorch", args.epochs, seconds, scores["val_psnr"], scores["val_bicubic_psnr"])


if __name__ == "__main__":
    main()
