#!/usr/bin/env python3
"""hookforge's weights files against Python's own: PyTorch, safetensors, Lightning, MMEngine.

    interop.py PROBE CASE [HOOKFORGE_RUN]

Run with the Python of scripts/peers.sh (PyTorch 2.x, Lightning, MMEngine, safetensors).
hookforge's side is tests/weights/probe.cpp (PROBE, its binary): `probe read` writes what
hookforge::read_weights found as raw bytes and a manifest, `probe write` writes tensors
given the same way with hookforge::write_weights. Python is the oracle: each case prints
what it compared on one line, and exits 1 at the first difference, naming the file and
the tensor. The probe may be built with an older LibTorch than this Python's (1.13, which
lacks uint16/32/64 and the float8 and float4 types): the cases take the dtypes `probe
dtypes` lists as they take every dtype, and expect a file of one it lacks refused naming it.

python_to_hookforge      torch.save of every dtype (random bytes: every bit pattern, NaN
                         payloads included), a scalar, empty tensors, a transposed view,
                         offset and strided views of a saved tensor, two names of one
                         tensor, an nn.Parameter, a plain dict, a real Module.state_dict()
                         (an OrderedDict with _metadata, BatchNorm's buffers, a tied
                         weight), and the same with pickle protocol 4 -> probe read: names
                         in order, dtype, shape and bytes equal, and the tensors that share
                         a storage in Python share one in hookforge, no others.
lightning_ckpt           the .ckpt a real Lightning Trainer.fit writes -> probe read: the
                         entry 'state_dict' ('net.' names), equal to the checkpoint's, found
                         and named explicitly; a key it lacks is refused naming those it has.
mmengine_ckpt            epoch_1.pth of a real MMEngine Runner -> probe read: the entry
                         'state_dict', equal to the checkpoint's and the model's (its message
                         hub holds NumPy arrays, HistoryBuffers and a getattr, read as opaque).
safetensors_from_python  safetensors.torch.save_file (every dtype it has, metadata) ->
                         probe read: equal, names in the order of their data, the metadata.
hookforge_to_python      probe write pth and safetensors of tensors Python gives (every
                         dtype of each, a scalar, empty tensors, non-contiguous, offset views,
                         a tie) -> torch.load with its default (weights_only),
                         weights_only=True and mmap=True: an OrderedDict, equal, ties and
                         views kept; safetensors.torch.load_file: equal, with the metadata.
                         A dtype a format cannot hold is refused naming the tensor (.pth:
                         those torch.save writes with _rebuild_tensor_v3, uint16 on).
espcn_roundtrip          hookforge's ESPCN saved (pth, safetensors) -> a PyTorch ESPCN of the
                         same architecture and names loads it strictly, and both give the same
                         output on a real photograph (scikit-image's camera) to 1e-5; and
                         back: the PyTorch ESPCN's own weights -> hookforge's ESPCN, the same.
trained_roundtrip        what a user does with real runs (HOOKFORGE_RUN: hookforge-run; exit
                         77 without it or the photographs): hookforge-run trains
                         configs/sr_photos.yaml for an epoch, its CheckpointSaver writing
                         .safetensors beside the checkpoints, then `hookforge-run export
                         --format pth`; a PyTorch ESPCN (residual) loads both strictly and
                         equals hookforge's output on the validation photographs to 1e-5.
                         Back: an ESPCN trained in Python, torch.save'd, fine-tunes in
                         hookforge-run through `Pretrained`; names under 'net.' fail (exit 2,
                         the closest names said) until strip_prefix: ["net."].
hostile                  archives whose pickle calls os.system, posix.system, builtins.eval,
                         subprocess.Popen or a getattr chain to exec; a truncated zip; garbage
                         for data.pkl; a storage claiming more than its record holds; a tensor
                         reaching past its storage; a missing record; and the hostile files
                         of tests/weights/safetensors_cases.py when it exists: each refused
                         naming the file (and the global; probe read-each, one process), and
                         nothing runs; `probe read` of one exits 3.

The cases live beside this file: interop_common.py (the probe, manifests, comparisons),
interop_dtypes.py (python_to_hookforge, safetensors_from_python, hookforge_to_python),
interop_peers.py (lightning_ckpt, mmengine_ckpt), interop_photos.py and interop_espcn.py
(espcn_roundtrip), interop_trained.py (trained_roundtrip), interop_hostile.py (hostile).
"""
import os
import sys
import tempfile

import torch

import interop_common
from interop_common import fail
from interop_dtypes import (check_hookforge_to_python, check_python_to_hookforge,
                            check_safetensors_from_python)
from interop_espcn import check_espcn_roundtrip
from interop_hostile import check_hostile
from interop_peers import check_lightning_ckpt, check_mmengine_ckpt
from interop_trained import check_trained_roundtrip

CHECKS = {"python_to_hookforge": check_python_to_hookforge,
          "lightning_ckpt": check_lightning_ckpt, "mmengine_ckpt": check_mmengine_ckpt,
          "safetensors_from_python": check_safetensors_from_python,
          "hookforge_to_python": check_hookforge_to_python,
          "espcn_roundtrip": check_espcn_roundtrip, "trained_roundtrip": check_trained_roundtrip,
          "hostile": check_hostile}


def main():
    if len(sys.argv) not in (3, 4):
        fail("usage: interop.py PROBE CASE [HOOKFORGE_RUN]")
    interop_common.PROBE, what = os.path.abspath(sys.argv[1]), sys.argv[2]
    if len(sys.argv) == 4:
        interop_common.RUN = os.path.abspath(sys.argv[3])
    if what not in CHECKS:
        fail(f"unknown case {what} ({', '.join(CHECKS)})")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="interop-") as work:
        CHECKS[what](work)


if __name__ == "__main__":
    main()
