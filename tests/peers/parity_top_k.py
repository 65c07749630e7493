"""parity.py top_k: CheckpointSaver's save_top_k against Lightning's ModelCheckpoint.

ModelCheckpoint(monitor, mode, save_top_k, filename) is driven through its own
_save_topk_checkpoint, once per epoch with that epoch's score, by a stand-in trainer (it saves
a small file holding the callback's state_dict, and removes through the callback's own
checks); a resume is a new callback loading the state stored in the file written at that epoch,
as Trainer.fit(ckpt_path=...) restores it. Compared after every epoch: the files in the folder
and the best one (best_model_path). The names come from the same template on both sides,
score included ("best_score_{score:.3f}_epoch_{epoch}"; .ckpt read as .pt). Not compared, and
documented: a NaN score (Lightning keeps it as the worst value while fewer than k are kept;
hookforge never keeps it), and Lightning's keeping the checkpoint a run resumed from when it
leaves the top k (here each resume is from a file that is not removed later: hookforge removes
it).
"""
import os
import random
import tempfile
import types

import torch

from parity import fail, hookforge_lines

TEMPLATE = "best_score_{score:.3f}_epoch_{epoch}"


def listing(work):
    names = [n.replace(".ckpt", ".pt") for n in os.listdir(work) if n != "last_checkpoint"]
    return ",".join(sorted(names))


def lightning_top_k(k, rule, resume_at, scores, work):
    """The files after each epoch and the best one, as 'files;best' per epoch, '|'-joined."""
    from pytorch_lightning.callbacks import ModelCheckpoint
    for name in os.listdir(work):  # a fresh folder
        os.remove(os.path.join(work, name))
    mode = "max" if rule == "greater" else "min"
    saved = {}  # file name: the callback's state when it was written

    def make():
        return ModelCheckpoint(dirpath=work, filename=TEMPLATE, monitor="score", mode=mode,
                               save_top_k=k, auto_insert_metric_name=False, save_last=False)

    callback = make()
    strategy = types.SimpleNamespace(reduce_boolean_decision=lambda decision, all=True: decision,
                                     remove_checkpoint=lambda path: os.remove(path))

    def save_checkpoint(path, weights_only=False):
        with open(path, "w") as f:
            f.write("checkpoint\n")
        saved[os.path.basename(path)] = dict(callback.state_dict())

    trainer = types.SimpleNamespace(strategy=strategy, save_checkpoint=save_checkpoint, global_step=0,
                                    is_global_zero=True, loggers=[], ckpt_path=None)
    out = []
    for epoch, score in enumerate(scores, start=1):
        trainer.global_step = 10 * epoch
        candidates = {"score": torch.tensor(score, dtype=torch.float64), "epoch": torch.tensor(epoch),
                      "step": torch.tensor(10 * epoch)}
        callback._save_topk_checkpoint(trainer, candidates)
        best = os.path.basename(callback.best_model_path).replace(".ckpt", ".pt")
        out.append(f"{listing(work)};{best}")
        if epoch == resume_at:
            name = TEMPLATE.format(score=score, epoch=epoch) + ".ckpt"
            state = saved.get(name)
            if state is None:
                return None  # no file at that epoch to resume from
            callback = make()
            callback.load_state_dict(state)
    return "|".join(out)


def check_top_k(binary):
    rng = random.Random(23)
    cases = [  # (k, rule, scores)
        (2, "greater", [0.1, 0.3, 0.2, 0.3, 0.5]),  # a tie with the best; the older leaves first
        (3, "less", [0.5, 0.5, 0.5, 0.4, 0.5, 0.3]),  # equal scores fill the k, then leave in order
        (-1, "greater", [0.2, 0.1, 0.3]),  # every scored checkpoint
        (1, "less", [0.3, 0.3, 0.2, 0.2, 0.1]),  # one best: MMEngine's save_best too
    ]
    for _ in range(250):
        n = rng.randint(4, 12)
        kind = rng.random()
        if kind < 0.6:  # ties
            scores = [round(rng.uniform(0, 1), 1) for _ in range(n)]
        elif kind < 0.8:  # monotone
            scores = sorted((round(rng.uniform(0, 1), 3) for _ in range(n)), reverse=rng.random() < 0.5)
        else:  # plateaus
            scores = [round(rng.uniform(0, 1), 1) if rng.random() < 0.3 else 0.5 for _ in range(n)]
        cases.append((rng.choice([-1, 1, 2, 3, 5]), rng.choice(["greater", "less"]), scores))
    runs = []  # (case, resume_at, Lightning's answer, the driver's line)
    with tempfile.TemporaryDirectory() as work:
        for k, rule, scores in cases:
            for resume_at in sorted({0, *rng.sample(range(1, len(scores)), 2)}):
                want = lightning_top_k(k, rule, resume_at, scores, work)
                if want is None:
                    continue  # Lightning wrote nothing at that epoch: nothing to resume from
                line = " ".join(map(str, [k, rule, resume_at, len(scores), *scores]))
                runs.append(((k, rule, scores), resume_at, want, line))
    answers = hookforge_lines(binary, "top_k", [line for *_, line in runs])
    resumed = 0
    for (case, resume_at, want, line), got in zip(runs, answers):
        if got != want:
            fail(f"CheckpointSaver save_top_k on '{line}' (K RULE RESUME_AT EPOCHS SCORE...), "
                 f"'files;best' after each epoch:\n  hookforge {got}\n  Lightning {want}")
        resumed += resume_at > 0
    print(f"top_k: {len(runs)} runs ({len(cases)} settings of save_top_k -1/1/2/3/5, greater and less, "
          f"{resumed} of them resumed from the file of an epoch): the files after every epoch and the "
          f"best file equal Lightning's ModelCheckpoint's")
