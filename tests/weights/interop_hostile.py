"""The case `hostile` of interop.py: .pth files built here whose pickle calls what
torch.load(weights_only=True) refuses, or whose records lie, and the hostile safetensors
files of safetensors_cases.py; hookforge refuses each naming the file, and nothing runs.
"""
import os
import random
import struct
import sys
import tempfile
import zipfile

import torch

from interop_common import HERE, compare, fail, hookforge_read, probe, refusals, refused_naming

# --- hostile -------------------------------------------------------------------------------------

class P:
    """Pickle opcodes (protocol 2), enough to write what torch.save writes and what it never
    would."""

    @staticmethod
    def glob(module, name):
        return b"c" + f"{module}\n{name}\n".encode()

    @staticmethod
    def text(s):
        b = s.encode()
        return b"X" + struct.pack("<I", len(b)) + b

    @staticmethod
    def int(n):
        b = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
        return b"\x8a" + bytes([len(b)]) + b

    @staticmethod
    def tuple(*items):
        return b"(" + b"".join(items) + b"t"

    @staticmethod
    def list(*items):
        return b"](" + b"".join(items) + b"e"

    @staticmethod
    def call(f, *args):
        return f + P.tuple(*args) + b"R"

    @staticmethod
    def dict(**items):
        return b"}(" + b"".join(P.text(k) + v for k, v in items.items()) + b"u"

    @staticmethod
    def tensor(key, numel, offset, sizes, strides):
        storage = P.tuple(P.text("storage"), P.glob("torch", "FloatStorage"), P.text(key),
                          P.text("cpu"), P.int(numel)) + b"Q"
        return P.call(P.glob("torch._utils", "_rebuild_tensor_v2"), storage, P.int(offset),
                      P.tuple(*map(P.int, sizes)), P.tuple(*map(P.int, strides)), b"\x89",
                      P.call(P.glob("collections", "OrderedDict")))

    @staticmethod
    def pickle(body):
        return b"\x80\x02" + body + b"."


def replace_record(src, dst, suffix, data):
    """A copy of the zip `src` with the record whose name ends with `suffix` holding `data`."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename,
                          data if info.filename.endswith(suffix) else zin.read(info.filename))


def check_hostile(work):
    real = os.path.join(work, "real.pth")
    torch.save({"w": torch.arange(4, dtype=torch.float32)}, real)  # its storage: record data/0
    w = P.tensor("0", 4, 0, [4], [1])

    # The control: the same archive with a pickle written here, read by both.
    control = os.path.join(work, "control.pth")
    replace_record(real, control, "/data.pkl", P.pickle(P.dict(w=w)))
    if not torch.equal(torch.load(control, weights_only=True)["w"], torch.arange(4.0)):
        fail(f"{control}: the hand-written pickle should read as torch.save's")
    compare(f"the hand-written control {os.path.basename(control)}", hookforge_read(control, work),
            [("w", torch.arange(4, dtype=torch.float32))])

    def touch(marker):
        return P.text(f"touch {marker}")

    def create(marker):
        return P.text(f"open({marker!r}, 'w').close()")

    # getattr (MMEngine's message hub has it) reaching exec through an allowed function:
    # getattr(getattr(_rebuild_tensor_v2, '__globals__').get('__builtins__'), 'get')('exec')
    getattr_ = P.glob("__builtin__", "getattr")
    get = P.call(getattr_, P.call(getattr_, P.glob("torch._utils", "_rebuild_tensor_v2"),
                                  P.text("__globals__")), P.text("get"))
    exec_ = P.call(P.call(getattr_, P.call(get, P.text("__builtins__")), P.text("get")),
                   P.text("exec"))
    pickles = [  # (name, its data.pkl given the file its payload would create, names to name)
        ("os_system", lambda m: P.dict(w=w, x=P.call(P.glob("os", "system"), touch(m))),
         ["os.system"]),
        ("posix_system", lambda m: P.dict(w=w, x=P.call(P.glob("posix", "system"), touch(m))),
         ["posix.system"]),
        ("builtins_eval", lambda m: P.dict(w=w, x=P.call(P.glob("builtins", "eval"), create(m))),
         ["builtins.eval"]),
        ("builtin_eval",  # protocol 2's name of the module builtins
         lambda m: P.dict(w=w, x=P.call(P.glob("__builtin__", "eval"), create(m))), ["eval"]),
        ("subprocess_popen", lambda m: P.dict(w=w, x=P.call(
            P.glob("subprocess", "Popen"), P.list(P.text("touch"), P.text(m)))),
         ["subprocess.Popen"]),
        ("getattr_exec", lambda m: P.dict(w=w, x=P.call(exec_, create(m))), []),
        ("storage_claims_more",  # 10^12 floats in a 16-byte record
         lambda m: P.dict(w=P.tensor("0", 10 ** 12, 0, [10 ** 12], [1])), []),
        ("size_past_storage", lambda m: P.dict(w=P.tensor("0", 4, 0, [100], [1])), []),
        ("offset_past_storage", lambda m: P.dict(w=P.tensor("0", 4, 3, [2], [1])), []),
        ("stride_overflow", lambda m: P.dict(w=P.tensor("0", 4, 0, [3], [2 ** 62])), []),
        ("missing_record", lambda m: P.dict(w=P.tensor("7", 4, 0, [4], [1])), []),
    ]
    cases, markers = [], []  # (file, names the message must hold besides the file); payloads
    for name, body, names in pickles:
        marker = os.path.join(work, f"ran_{name}")
        file = os.path.join(work, f"{name}.pth")
        replace_record(real, file, "/data.pkl", P.pickle(body(marker)))
        cases.append((file, names))
        markers.append(marker)
    # The globals are refused by Python's weights-only loader too: the files are well formed.
    for file, names in cases[:5]:
        try:
            torch.load(file, weights_only=True)
            fail(f"{file}: Python's torch.load(weights_only=True) should refuse it")
        except Exception as e:
            if names[0].split(".")[-1] not in str(e):
                fail(f"{file}: Python's torch.load(weights_only=True) refused it for another "
                     f"reason: {e}")
    garbage = os.path.join(work, "garbage_pickle.pth")
    replace_record(real, garbage, "/data.pkl", random.Random(13).randbytes(300))
    big = os.path.join(work, "big.pth")
    torch.save({"w": torch.randn(64, 64)}, big)
    with open(big, "rb") as f:
        data = f.read()
    truncated = os.path.join(work, "truncated.pth")
    with open(truncated, "wb") as f:
        f.write(data[:len(data) // 2])
    text = os.path.join(work, "notes.pth")
    with open(text, "w") as f:
        f.write("not weights\n" * 10)
    cases += [(garbage, []), (truncated, []), (text, [])]
    extra, unknown = [], "none of the weights files hookforge reads"
    if os.path.exists(os.path.join(HERE, "safetensors_cases.py")):
        sys.path.insert(0, HERE)
        import safetensors_cases
        folder = os.path.join(work, "safetensors")
        os.makedirs(folder)
        extra = [(os.path.join(folder, name), expected)
                 for name, expected in safetensors_cases.hostile_files(folder)]
    messages = refusals([file for file, _ in cases] + [file for file, _ in extra])
    # One run alone: `probe read` exits 3 on a refused file, the error on stderr.
    out = tempfile.mkdtemp(dir=work)
    alone = probe("read", cases[0][0], out, expect=3).stderr.strip()
    if alone != messages[0] or os.listdir(out):
        fail(f"probe read {cases[0][0]} should refuse it as read-each did ({messages[0]}) and "
             f"write nothing: {alone}, {os.listdir(out)}")
    for (file, names), message in zip(cases, messages):
        refused_naming(file, message, *names)
    for (file, _), marker in zip(cases, markers):
        if os.path.exists(marker):
            fail(f"{file}: reading it ran its payload (created {marker})")
    # read_weights tells a file's kind by its content: one that does not start like safetensors
    # (an empty file, a header length past the end) is refused as no kind it reads; every
    # other meets the safetensors reader and its message.
    generic = 0
    for (file, expected), message in zip(extra, messages[len(cases):]):
        refused_naming(file, message)
        if expected not in message and unknown not in message:
            fail(f"refusing {file} (tests/weights/safetensors_cases.py): the message should say "
                 f"'{expected}' (or, not told a safetensors file, '{unknown}'): {message}")
        generic += expected not in message
    also = (f", and the {len(extra)} hostile files of safetensors_cases.py ({len(extra) - generic} "
            f"with the safetensors reader's message, {generic} not taken for safetensors)"
            if extra else "")
    print(f"hostile: {len(cases)} files refused by hookforge naming the file (os.system, "
          f"posix.system, builtins.eval, __builtin__.eval, subprocess.Popen named; a getattr "
          f"chain to exec, a storage claiming 10^12 floats, a tensor past its storage by size, "
          f"offset and stride, a missing record, garbage for data.pkl, a truncated zip, a text "
          f"file){also}; no payload ran; `probe read` exits 3; a hand-written control reads "
          f"as in Python")
