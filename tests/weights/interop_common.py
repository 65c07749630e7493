"""What the cases of interop.py share: the probe (tests/weights/probe.cpp) and what it
answers, tensors as the bytes the probe reads and writes, and the comparisons.

interop.py sets PROBE (and RUN, hookforge-run, for trained_roundtrip) before a case runs.
Every check ends the test with fail(): a line on stderr, exit code 1.
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


# --- the probe -----------------------------------------------------------------------------------

PROBE = None
RUN = None  # hookforge-run, where a case needs it


def probe(*args, expect=0):
    """Runs the probe; fails unless it exits `expect` (None: any). Returns the process."""
    p = subprocess.run([PROBE] + [str(a) for a in args], capture_output=True, text=True)
    if expect is not None and p.returncode != expect:
        fail(f"probe {' '.join(map(str, args))} exited {p.returncode}, not {expect}:\n"
             f"{p.stderr.strip()}")
    return p


class Read:
    """What `probe read` found: tensors [(name, dtype, shape, bytes)], name -> storage group,
    describe(), kind, entry, other entries, metadata."""

    def __init__(self, out):
        self.tensors, self.groups = [], {}
        with open(os.path.join(out, "manifest.txt")) as f:
            for line in f.read().splitlines():
                name, dtype, shape, raw, group = line.split("\t")
                with open(raw, "rb") as r:
                    data = r.read()
                self.tensors.append((name, dtype, tuple(int(n) for n in shape.split(",") if n),
                                     data))
                self.groups[name] = int(group)
        with open(os.path.join(out, "describe.txt")) as f:
            self.describe = f.read().strip()
        self.entry, self.kind, self.others = "", "", []
        with open(os.path.join(out, "info.txt")) as f:
            for line in f.read().splitlines():
                what, _, value = line.partition("\t")
                if what == "other":
                    self.others.append(value)
                else:
                    setattr(self, what, value)
        with open(os.path.join(out, "metadata.txt")) as f:
            self.metadata = dict(line.split("\t", 1) for line in f.read().splitlines())


def hookforge_read(file, work, key=None):
    out = tempfile.mkdtemp(dir=work)
    probe("read", file, out, *([key] if key is not None else []))
    return Read(out)


def probe_many(runs):
    """Runs the probe with each list of arguments in `runs` side by side (each run loads
    LibTorch, most of its time); returns the processes."""
    def run(args):
        return subprocess.run([PROBE] + [str(a) for a in args], capture_output=True, text=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return list(pool.map(run, runs))


def refusals(files):
    """hookforge's refusal of each of `files` (probe read-each: one process for all); fails
    for a file it reads."""
    p = probe("read-each", *files)
    outcomes = p.stdout.splitlines()
    if len(outcomes) != len(files):
        fail(f"probe read-each answered {len(outcomes)} of {len(files)} files: {p.stderr}")
    for file, outcome in zip(files, outcomes):
        if not outcome.startswith("error: "):
            fail(f"hookforge should refuse {file}, but read it")
    return outcomes


def refused_naming(file, message, *expected):
    for want in (os.path.basename(file),) + expected:
        if want not in message:
            fail(f"refusing {file}: the message should name '{want}': {message}")


# --- tensors as bytes ----------------------------------------------------------------------------

def dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def raw_bytes(t):
    """The tensor's bytes as hookforge's probe writes them: contiguous, row-major."""
    t = t.detach().contiguous().cpu()
    return b"" if t.numel() == 0 else t.reshape(-1).view(torch.uint8).numpy().tobytes()


def random_tensor(dtype, shape, gen):
    """Random bytes as `dtype` (every bit pattern: NaNs with payloads, denormals, the extremes);
    bool 0 or 1."""
    numel = int(np.prod(shape)) if shape else 1
    if dtype == torch.bool:
        return torch.randint(0, 2, (numel,), generator=gen).bool().reshape(shape)
    size = torch.empty((), dtype=dtype).element_size()
    data = torch.randint(0, 256, (numel * size,), dtype=torch.uint8, generator=gen)
    return data.view(dtype).reshape(shape)


def storage_key(t):
    """Equal for tensors sharing a storage; an empty storage shares with nothing."""
    s = t.untyped_storage()
    return (s.data_ptr(), s.nbytes()) if s.nbytes() else ("empty", id(t))


def compare(label, got, want):
    """hookforge's Read `got` against [(name, tensor)] `want`: the names in order, each dtype,
    shape and byte, and which names share a storage."""
    got_names, want_names = [n for n, *_ in got.tensors], [n for n, _ in want]
    if got_names != want_names:
        fail(f"{label}: hookforge read the names {got_names}, Python saved {want_names}")
    for (name, dtype, shape, data), (_, t) in zip(got.tensors, want):
        if dtype != dtype_name(t.dtype) or shape != tuple(t.shape):
            fail(f"{label}: '{name}' is {dtype} {list(shape)} in hookforge, "
                 f"{dtype_name(t.dtype)} {list(t.shape)} in Python")
        if data != raw_bytes(t):
            at = next(i for i, (a, b) in enumerate(zip(data, raw_bytes(t))) if a != b) \
                if len(data) == len(raw_bytes(t)) else "its length"
            fail(f"{label}: '{name}' ({dtype} {list(shape)}) differs from Python's at byte {at}")
    keys = {name: storage_key(t) for name, t in want}
    for i, a in enumerate(want_names):
        for b in want_names[i + 1:]:
            shared_py, shared_hf = keys[a] == keys[b], got.groups[a] == got.groups[b]
            if shared_py != shared_hf:
                fail(f"{label}: '{a}' and '{b}' " +
                     ("share a storage in Python, not in hookforge" if shared_py else
                      "share a storage in hookforge, not in Python"))
    return sum(1 for i, a in enumerate(want_names)
               if any(keys[a] == keys[b] for b in want_names[:i]))


def write_manifest(folder, rows, metadata=None):
    """rows: (name, tensor, group, layout) for `probe write`."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "manifest.txt"), "w") as f:
        for i, (name, t, group, layout) in enumerate(rows):
            raw = f"{i}.bin"
            with open(os.path.join(folder, raw), "wb") as r:
                r.write(raw_bytes(t))
            shape = ",".join(map(str, t.shape))
            f.write(f"{name}\t{dtype_name(t.dtype)}\t{shape}\t{raw}\t{group}\t{layout}\n")
    if metadata:
        with open(os.path.join(folder, "metadata.txt"), "w") as f:
            f.writelines(f"{k}\t{v}\n" for k, v in metadata.items())


def equal_tensors(label, got, rows, ordered=True):
    names = [name for name, *_ in rows]
    if (list(got) if ordered else sorted(got)) != (names if ordered else sorted(names)):
        fail(f"{label}: Python read the names {list(got)}, hookforge wrote {names}")
    for name, t, *_ in rows:
        g = got[name]
        if g.dtype != t.dtype or g.shape != t.shape or raw_bytes(g) != raw_bytes(t):
            fail(f"{label}: '{name}' is {dtype_name(g.dtype)} {list(g.shape)} in Python, "
                 f"written from {dtype_name(t.dtype)} {list(t.shape)}"
                 + (", bytes differ" if g.dtype == t.dtype and g.shape == t.shape else ""))


# --- the dtypes the probe's LibTorch has ---------------------------------------------------------

_HELD = None


def held_dtypes():
    """The torch dtypes the probe's LibTorch has (`probe dtypes`): the Python here (2.x) has
    more than LibTorch 1.13, which lacks uint16/32/64 and the float8 and float4 types."""
    global _HELD
    if _HELD is None:
        names = probe("dtypes").stdout.split()
        unknown = [n for n in names if not isinstance(getattr(torch, n, None), torch.dtype)]
        if not names or unknown:
            fail(f"probe dtypes answered {names}: {unknown or 'nothing'} not a dtype of PyTorch "
                 f"{torch.__version__}")
        _HELD = {getattr(torch, n) for n in names}
    return _HELD


def split_held(dtypes):
    """`dtypes` as (those the probe's LibTorch has, those it lacks), each in order."""
    held = held_dtypes()
    return [d for d in dtypes if d in held], [d for d in dtypes if d not in held]


def lacking_note(lacking, what):
    """The summary's words for the dtypes the probe's LibTorch lacks ('' when none)."""
    if not lacking:
        return ""
    names = ", ".join(map(dtype_name, lacking))
    return f"; the {len(lacking)} dtypes this LibTorch lacks ({names}) {what}"
