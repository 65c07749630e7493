"""The dtype cases of interop.py: python_to_hookforge, safetensors_from_python and
hookforge_to_python. Each takes the dtypes the probe's LibTorch has (interop_common.held_dtypes)
as it takes every dtype; a file holding one it lacks must be refused naming that dtype.
"""
import collections
import json
import os
import struct

import torch
from torch import nn

from interop_common import (compare, dtype_name, equal_tensors, fail, held_dtypes,
                            hookforge_read, lacking_note, probe, probe_many, random_tensor,
                            refusals, refused_naming, split_held, write_manifest)

# --- python_to_hookforge -------------------------------------------------------------------------

# torch.save's dtypes: those of the legacy storage classes (hookforge writes these), then those
# torch.save writes as an UntypedStorage with _rebuild_tensor_v3 (hookforge reads them, and
# refuses to write them, naming the tensor: its .pth is the legacy layout; weights/pth.hpp).
PTH_WRITTEN = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8,
               torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool, torch.complex64,
               torch.complex128]
PTH_READ_ONLY = [torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn, torch.float8_e5m2,
                 torch.float8_e4m3fnuz, torch.float8_e5m2fnuz, torch.float8_e8m0fnu,
                 torch.float4_e2m1fn_x2]
PTH_DTYPES = PTH_WRITTEN + PTH_READ_ONLY


class Small(nn.Module):
    """A module with buffers (BatchNorm's, int64 num_batches_tracked among them) and a tied
    weight (the head's weight is the embedding's, as language models tie them)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 6)
        self.body = nn.Sequential(nn.Conv1d(6, 6, 3, padding=1), nn.BatchNorm1d(6), nn.ReLU())
        self.head = nn.Linear(6, 10, bias=False)
        self.head.weight = self.embed.weight


def refused_lacking(label, files):
    """files: [(file, dtype, the name its refusal must hold)], each holding a dtype the probe's
    LibTorch lacks: hookforge refuses each (probe read-each) naming the file and the dtype."""
    if not files:
        return
    for (file, dtype, name), message in zip(files, refusals([file for file, *_ in files])):
        refused_naming(file, message)
        if name not in message:
            fail(f"{label}: refusing {file}, of {dtype_name(dtype)}, which this LibTorch lacks, "
                 f"the message should name '{name}': {message}")


def check_python_to_hookforge(work):
    gen = torch.Generator().manual_seed(1)
    held, lacking = split_held(PTH_DTYPES)
    every = {d: random_tensor(d, (3, 5), gen) for d in PTH_DTYPES}
    tensors = {dtype_name(d): every[d] for d in held}
    matrix = torch.randn(4, 6, generator=gen)
    line = torch.arange(40, dtype=torch.float64)
    tied = torch.randn(5, generator=gen)
    tensors.update({
        "scalar": torch.tensor(2.5), "scalar_int": torch.tensor(-7, dtype=torch.int64),
        "empty": torch.zeros(0, 3), "empty_long": torch.zeros(2, 0, dtype=torch.int64),
        "matrix": matrix, "matrix.T": matrix.t(),  # a non-contiguous view of a saved tensor
        "lone.T": torch.randn(3, 7, generator=gen).t(),  # ... of one not saved
        "line": line, "line[7:19]": line[7:19], "line[3::5]": line[3::5],  # offset, strided
        "tied_a": tied, "tied_b": tied,
        "param": nn.Parameter(torch.randn(2, 3, generator=gen)),
    })
    model = Small()
    model.body[1].running_mean.copy_(torch.randn(6, generator=gen))
    model.body[1].num_batches_tracked.fill_(12345678901)
    state = model.state_dict()
    if type(state) is not collections.OrderedDict or not hasattr(state, "_metadata"):
        fail("Module.state_dict() should be an OrderedDict with _metadata")
    files = []  # (label, file, [(name, tensor)])
    for label, obj, kwargs in [("a plain dict", tensors, {}),
                               ("Small().state_dict()", state, {}),
                               ("a plain dict, pickle protocol 4", tensors,
                                {"pickle_protocol": 4}),
                               ("Small().state_dict(), pickle protocol 4", state,
                                {"pickle_protocol": 4})]:
        file = os.path.join(work, f"python{len(files)}.pth")
        torch.save(obj, file, **kwargs)
        files.append((f"{label} ({os.path.basename(file)})", file, list(obj.items())))
    ties = 0
    for label, file, want in files:
        got = hookforge_read(file, work)
        ties += compare(label, got, want)
        if not got.describe.startswith("PyTorch archive") or got.entry:
            fail(f"{label}: describe() says '{got.describe}' (entry '{got.entry}'), expected a "
                 f"PyTorch archive read whole")
    # A dtype the probe's LibTorch lacks: torch.save names it (the global torch.uint16, ...).
    odd = []
    for d in lacking:
        file = os.path.join(work, f"lacking_{dtype_name(d)}.pth")
        torch.save({f"t.{dtype_name(d)}": every[d], "fine": torch.ones(2)}, file)
        odd.append((file, d, dtype_name(d)))
    refused_lacking("python_to_hookforge", odd)
    print(f"python_to_hookforge: {len(files)} torch.save files ({len(held)} dtypes as "
          f"random bytes, scalars, empty, transposed, offset and strided views, an nn.Parameter, "
          f"a Module.state_dict() with _metadata, buffers and a tied weight; pickle protocols 2 "
          f"and 4) read by hookforge bit for bit, names in order, the {ties} names sharing a "
          f"storage in Python sharing one in hookforge and no others"
          f"{lacking_note(lacking, 'in a file each, refused naming the dtype')}")


# --- safetensors ---------------------------------------------------------------------------------

# Every dtype of safetensors that PyTorch has (float4_e2m1fn_x2: F4, two to a byte).
SAFETENSORS_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8,
                      torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool,
                      torch.complex64, torch.uint16, torch.uint32, torch.uint64,
                      torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz,
                      torch.float8_e5m2fnuz, torch.float8_e8m0fnu, torch.float4_e2m1fn_x2]


def header_of(file):
    """A safetensors file's JSON header."""
    with open(file, "rb") as f:
        return json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))


def check_safetensors_from_python(work):
    import safetensors
    from safetensors.torch import save_file
    gen = torch.Generator().manual_seed(5)
    held, lacking = split_held(SAFETENSORS_DTYPES)
    every = {d: random_tensor(d, (2, 3, 4), gen) for d in SAFETENSORS_DTYPES}
    tensors = {f"layer.{dtype_name(d)}": every[d] for d in held}
    tensors.update({"scalar": torch.tensor(1.5), "empty": torch.zeros(0, 4, dtype=torch.int32),
                    "row": random_tensor(torch.bfloat16, (1, 9), gen)})
    metadata = {"format": "pt", "origin": "tests/weights/interop.py", "note": "a:b, {c}"}
    file = os.path.join(work, "python.safetensors")
    save_file(tensors, file, metadata=metadata)
    got = hookforge_read(file, work)
    # The names in the order of their data (safetensors sorts by dtype, then name).
    header = header_of(file)
    order = sorted((v["data_offsets"], k) for k, v in header.items() if k != "__metadata__")
    compare(f"safetensors {os.path.basename(file)}", got, [(k, tensors[k]) for _, k in order])
    if got.metadata != metadata or not got.kind.startswith("safetensors"):
        fail(f"{file}: hookforge read the kind '{got.kind}' and metadata {got.metadata}, "
             f"saved {metadata}")
    # A dtype the probe's LibTorch lacks, by the format's name of it (U16, F8_E5M2, ...).
    odd = []
    for d in lacking:
        file = os.path.join(work, f"lacking_{dtype_name(d)}.safetensors")
        save_file({f"layer.{dtype_name(d)}": every[d], "fine": torch.ones(2)}, file)
        odd.append((file, d, header_of(file)[f"layer.{dtype_name(d)}"]["dtype"]))
    refused_lacking("safetensors_from_python", odd)
    print(f"safetensors_from_python: save_file of safetensors {safetensors.__version__} "
          f"({len(held)} dtypes as random bytes, a scalar, an empty tensor, "
          f"metadata) read by hookforge bit for bit, names in the data's order, the metadata "
          f"equal{lacking_note(lacking, 'in a file each, refused naming the dtype (U16, ...)')}")


def check_hookforge_to_python(work):
    import safetensors
    from safetensors import safe_open
    from safetensors.torch import load_file
    gen = torch.Generator().manual_seed(6)
    base = torch.randn(30, generator=gen)
    tie = torch.randn(10, 6, generator=gen)

    def rows(dtypes):
        out = [(f"t.{dtype_name(d)}", random_tensor(d, (3, 5), gen), f"g{i}", "-")
               for i, d in enumerate(dtypes)]
        return out + [
            ("scalar", torch.tensor(-0.0), "s0", "-"),
            ("scalar_long", torch.tensor(2 ** 40 + 3), "s1", "-"),
            ("scalar_bool", torch.tensor(True), "s2", "-"),
            ("empty", torch.zeros(0), "e0", "-"),
            ("empty3", torch.zeros(2, 0, 3, dtype=torch.float16), "e1", "-"),
            ("matrix.T", torch.randn(4, 7, generator=gen), "m", "t"),  # non-contiguous
            ("base", base, "b", "-"), ("base.view", base[4:24].reshape(4, 5), "b", "view:4"),
            ("padded", torch.randn(2, 3, generator=gen), "p", "pad:7"),  # storage offset 7
            ("embed.weight", tie, "tie", "-"), ("head.weight", tie, "tie", "-"),  # one tensor
        ]

    metadata = {"format": "pt", "written_by": "hookforge probe"}
    compared = []
    # .pth: the dtypes of torch.save's legacy storages.
    pth_held, pth_lacking = split_held(PTH_WRITTEN)
    pth_rows = rows(pth_held)
    folder = os.path.join(work, "pth")
    write_manifest(folder, pth_rows)
    file = os.path.join(work, "hookforge.pth")
    probe("write", "pth", file, folder)
    for how, kwargs in [("torch.load(f)", {}), ("torch.load(f, weights_only=True)",
                                                {"weights_only": True}),
                        ("torch.load(f, weights_only=True, mmap=True)",
                         {"weights_only": True, "mmap": True})]:
        try:
            got = torch.load(file, **kwargs)
        except Exception as e:
            fail(f"{how} of hookforge's {file}: {type(e).__name__}: {e}")
        if type(got) is not collections.OrderedDict:
            fail(f"{how} of hookforge's {file}: a {type(got).__name__}, not an OrderedDict")
        equal_tensors(f"{how} of hookforge's .pth", got, pth_rows)
        if got["embed.weight"].untyped_storage().data_ptr() != \
                got["head.weight"].untyped_storage().data_ptr():
            fail(f"{how} of hookforge's {file}: 'embed.weight' and 'head.weight' (one tensor in "
                 f"hookforge) should share a storage")
        view, whole = got["base.view"], got["base"]
        if view.untyped_storage().data_ptr() != whole.untyped_storage().data_ptr() or \
                view.storage_offset() != 4:
            fail(f"{how} of hookforge's {file}: 'base.view' should be a view of 'base''s storage "
                 f"at offset 4 (storage offset {view.storage_offset()})")
        compared.append(how)
    # A dtype the format lacks, refused naming the tensor.
    # (A dtype the probe's LibTorch lacks has no tensor in C++ to write: left out, and said.)
    refused = [(fmt, d) for fmt, d in [("safetensors", torch.complex128), ("pth", torch.uint16),
                                       ("pth", torch.float8_e5m2), ("pth", torch.float4_e2m1fn_x2)]
               if d in held_dtypes()]
    runs = []
    for fmt, dtype in refused:
        odd = os.path.join(work, f"odd_{dtype_name(dtype)}")
        write_manifest(odd, [(f"odd.{dtype_name(dtype)}", random_tensor(dtype, (2, 2), gen), "0",
                              "-")])
        runs.append(["write", fmt, os.path.join(work, f"odd_{dtype_name(dtype)}.{fmt}"), odd])
    for (fmt, dtype), p in zip(refused, probe_many(runs)):
        if p.returncode != 3 or f"odd.{dtype_name(dtype)}" not in p.stderr:
            fail(f"writing {dtype_name(dtype)} to .{fmt}: exit code {p.returncode}, the error "
                 f"should name the tensor 'odd.{dtype_name(dtype)}': {p.stderr.strip()}")
    # safetensors: the dtypes it has.
    st_held, st_lacking = split_held(SAFETENSORS_DTYPES)
    st_rows = rows(st_held)
    folder = os.path.join(work, "safetensors")
    write_manifest(folder, st_rows, metadata)
    file = os.path.join(work, "hookforge.safetensors")
    probe("write", "safetensors", file, folder)
    got = load_file(file)
    equal_tensors("safetensors.torch.load_file of hookforge's file", got, st_rows, ordered=False)
    with safe_open(file, "pt") as f:
        stored = f.metadata() or {}
    if any(stored.get(k) != v for k, v in metadata.items()):
        fail(f"hookforge's {file}: safetensors reads the metadata {stored}, written {metadata}")
    lacking = pth_lacking + [d for d in st_lacking if d not in pth_lacking]
    print(f"hookforge_to_python: hookforge's .pth ({len(pth_held)} dtypes, scalars, empty, "
          f"non-contiguous, a view at offset 4, a padded storage, a tie) read by "
          f"{', '.join(compared)}: an OrderedDict equal bit for bit, the tie and the view kept; "
          f"its .safetensors ({len(st_held)} dtypes) by safetensors "
          f"{safetensors.__version__}'s load_file: equal, metadata kept; "
          f"{', '.join(f'{dtype_name(d)} to .{fmt}' for fmt, d in refused)} refused naming the "
          f"tensor{lacking_note(lacking, 'not written (no C++ tensor holds them)')}")
