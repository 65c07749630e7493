#!/usr/bin/env python3
"""safetensors files for hookforge's reader and writer (weights/safetensors.hpp) to meet.

    safetensors_cases.py hostile DIR        writes the hostile files; prints "NAME<TAB>EXPECTED"
    safetensors_cases.py reference FILE     writes the reference tensors with Python's library
    safetensors_cases.py check FILE         checks FILE holds exactly the reference tensors

hostile_files(directory) needs only the standard library: each file breaks one rule of the
format, and hookforge's reader must refuse it with a hookforge::checkpoint_error whose message
contains EXPECTED, before allocating anything the file only claims: under `/usr/bin/time -v`
the maximum resident size stays that of reading a small file (plus, for many_entries, a few
times its 2 MB header, parsed). The expected texts hold for LibTorch 1.13 and 2.x alike.

reference/check need PyTorch and safetensors (the Python of scripts/peers.sh has both): the
round trip is Python writes FILE (every dtype this PyTorch has, with __metadata__), hookforge
reads it and writes it again, and `check` reads hookforge's file with Python's load_file and
safe_open(...).metadata() and compares dtype, shape and bytes. Tensors of a dtype the
LibTorch hookforge was built with lacks (uint16/32/64 and float8 in 1.13) are left out with
`reference FILE --portable`; hookforge refuses them by name instead.
"""

import json
import os
import struct
import sys

HEADER_LIMIT = 100_000_000  # the Rust library's MAX_HEADER_SIZE


def _file(path, header, data=b"", length=None):
    """Writes a safetensors file: the header (a dict, or bytes as they are), then `data`.
    `length` replaces the header's true length in the first 8 bytes."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    n = len(text) if length is None else length
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", n) + text + data)


def _f32(name, shape, offsets):
    return {name: {"dtype": "F32", "shape": shape, "data_offsets": offsets}}


def hostile_files(directory):
    """Writes the hostile files into `directory`; returns [(file_name, expected_substring)],
    expected_substring being part of the error message hookforge's reader must give."""
    cases = []

    def case(name, expected, header, data=b"", length=None):
        _file(os.path.join(directory, name), header, data, length)
        cases.append((name, expected))

    def raw(name, expected, content):
        with open(os.path.join(directory, name), "wb") as f:
            f.write(content)
        cases.append((name, expected))

    sixteen = bytes(16)
    raw("empty.safetensors", "0 bytes, too short for a safetensors file", b"")
    raw("short.safetensors", "5 bytes, too short for a safetensors file", b"\x02\0\0\0\0")
    case("length_past_end.safetensors", "header length 1000 reaches past the end of the file",
         _f32("w", [4], [0, 16]), sixteen, length=1000)
    case("header_200mb.safetensors",
         "header length 200000000 exceeds safetensors' limit of 100000000 bytes",
         _f32("w", [4], [0, 16]), sixteen, length=200_000_000)
    case("length_zero.safetensors", "the header does not start with '{'", b"", sixteen)
    case("not_an_object.safetensors", "the header does not start with '{'", b"[1, 2]")
    case("not_json.safetensors", "the header is not valid JSON", b'{"w": {"dtype": ')
    case("bad_utf8.safetensors", "the header is not valid JSON",
         b'{"w\xff": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}', sixteen)
    # nlohmann's lexer reads a NUL byte as the end of the input.
    case("nul_after_json.safetensors", "the header holds a NUL byte at offset 70 of the file",
         json.dumps(_f32("w", [4], [0, 16])).encode() + b"\0 ", sixteen)
    case("nested_objects.safetensors", "the header nests deeper than safetensors' 3 levels",
         b'{"a":' * 10_000 + b"1" + b"}" * 10_000)
    case("nested_arrays.safetensors", "the header nests deeper than safetensors' 3 levels",
         b'{"w": {"dtype": "F32", "shape": ' + b"[" * 10_000 + b"]" * 10_000 + b"}}")
    # 200,000 entries: refused in well under a second. A parser that scans the entries at
    # each entry's end (nlohmann's json::parse with a callback) takes minutes on this.
    case("many_entries.safetensors", "tensor 'k000000' lacks 'dtype'",
         b"{" + b",".join(b'"k%06d":{}' % i for i in range(200_000)) + b"}")
    case("duplicate_key.safetensors", "the header has the key 'w' twice",
         b'{"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}, '
         b'"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}', sixteen)
    # 10^12 elements claimed in a file of a few hundred bytes.
    case("huge_shape.safetensors",
         "tensor 'w' has shape [1000000, 1000000] of F32 (4000000000000 bytes) but "
         "data_offsets [0, 16] hold 16 bytes", _f32("w", [1_000_000, 1_000_000], [0, 16]),
         sixteen)
    case("huge_offsets.safetensors",
         "tensor 'w' has data_offsets [0, 4000000000000] but the file holds 16 bytes",
         _f32("w", [1_000_000, 1_000_000], [0, 4_000_000_000_000]), sixteen)
    case("overflow.safetensors", "tensor 'w' has shape [4294967296, 4294967296, 2] of F32, "
         "whose size overflows 64 bits", _f32("w", [2**32, 2**32, 2], [0, 16]), sixteen)
    case("end_before_begin.safetensors",
         "tensor 'w' has data_offsets [16,0]; expected [begin, end], non-negative integers "
         "with begin <= end", _f32("w", [4], [16, 0]), sixteen)
    case("one_offset.safetensors", "tensor 'w' has data_offsets [0]; expected [begin, end]",
         _f32("w", [4], [0]), sixteen)
    case("negative_offset.safetensors", "tensor 'w' has data_offsets [-16,0]",
         _f32("w", [4], [-16, 0]), sixteen)
    case("offsets_outside.safetensors",
         "tensor 'w' has data_offsets [0, 4096] but the file holds 16 bytes",
         _f32("w", [1024], [0, 4096]), sixteen)
    case("truncated_data.safetensors",
         "tensor 'w' has data_offsets [0, 64] but the file holds 16 bytes",
         _f32("w", [16], [0, 64]), sixteen)
    case("overlap.safetensors", "tensor 'b' (data_offsets [8, 24]) overlaps tensor 'a'",
         {**_f32("a", [4], [0, 16]), **_f32("b", [4], [8, 24])}, bytes(24))
    case("hole.safetensors",
         "tensor 'b' (data_offsets [16, 24]) leaves bytes [8, 16] of the data unused",
         {**_f32("a", [2], [0, 8]), **_f32("b", [2], [16, 24])}, bytes(24))
    case("not_from_zero.safetensors", "leaves bytes [0, 8] of the data unused",
         _f32("w", [4], [8, 24]), bytes(24))
    case("trailing_bytes.safetensors",
         "the tensors' data end at byte 16 but the file holds 20 bytes of data",
         _f32("w", [4], [0, 16]), bytes(20))
    case("unknown_dtype.safetensors", 'tensor \'w\' has dtype "F128"; expected one of BOOL',
         {"w": {"dtype": "F128", "shape": [4], "data_offsets": [0, 16]}}, sixteen)
    case("no_libtorch_dtype.safetensors", "tensor 'w' has dtype F6_E2M3, which LibTorch",
         {"w": {"dtype": "F6_E2M3", "shape": [4], "data_offsets": [0, 3]}}, bytes(3))
    case("negative_shape.safetensors",
         "tensor 'w' has shape [2,-1]; expected an array of non-negative integers",
         _f32("w", [2, -1], [0, 16]), sixteen)
    case("float_shape.safetensors", "tensor 'w' has shape [2.0,2]; expected an array",
         _f32("w", [2.0, 2], [0, 16]), sixteen)
    case("string_shape.safetensors", "tensor 'w' has shape \"[4]\"; expected an array",
         _f32("w", "[4]", [0, 16]), sixteen)
    case("shape_past_int64.safetensors", "tensor 'w' has shape [0,9223372036854775808]",
         _f32("w", [0, 2**63], [0, 0]))
    case("strides_overflow.safetensors", "tensor 'w' has shape [0, 4611686018427387904, "
         "4611686018427387904], whose strides overflow", _f32("w", [0, 2**62, 2**62], [0, 0]))
    case("entry_not_object.safetensors", "tensor 'w' is 5; expected an object", {"w": 5})
    case("unknown_key.safetensors", "tensor 'w' has the unknown key 'offsets'",
         {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16], "offsets": [0, 16]}},
         sixteen)
    case("missing_key.safetensors", "tensor 'w' lacks 'data_offsets'",
         {"w": {"dtype": "F32", "shape": [4]}}, sixteen)
    case("metadata_not_string.safetensors",
         "__metadata__ 'k' is 5; safetensors metadata values must be strings",
         {"__metadata__": {"k": 5}, **_f32("w", [4], [0, 16])}, sixteen)
    case("metadata_not_object.safetensors", "__metadata__ is [\"k\"]; expected an object",
         {"__metadata__": ["k"], **_f32("w", [4], [0, 16])}, sixteen)
    case("bool_not_0_or_1.safetensors", "tensor 'm' (BOOL) holds the byte 2 at element 1",
         {"m": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}}, b"\x01\x02\x00")
    return cases


def _reference_tensors(portable):
    """name -> tensor: every dtype this PyTorch shares with safetensors (without uint16/32/64
    and float8 when `portable`), odd shapes (a scalar, an empty one) and NaN, inf, -0."""
    import torch

    ramp = torch.arange(-12, 12, dtype=torch.float64).reshape(2, 3, 4) / 7
    tensors = {
        "f64": ramp.clone(),
        "f32": ramp.float(),
        "f16": ramp.half(),
        "bf16": ramp.bfloat16(),
        "special": torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0]),
        "i64": torch.arange(-3, 3, dtype=torch.int64) * 10**15,
        "i32": torch.arange(-3, 3, dtype=torch.int32) * 10**8,
        "i16": torch.arange(-3, 3, dtype=torch.int16) * 10**4,
        "i8": torch.arange(-128, 128, 51, dtype=torch.int16).to(torch.int8),
        "u8": torch.arange(0, 256, 51, dtype=torch.int16).to(torch.uint8),
        "bool": torch.tensor([[True, False], [False, True]]),
        "c64": torch.complex(torch.arange(3.0), -torch.arange(3.0)),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 5),
        "nested.module.weight": torch.ones(1, 1, 1, 1),
    }
    if not portable:
        unsigned = torch.tensor([0, 1, 2**15], dtype=torch.int64)
        tensors.update({
            "u16": (unsigned + 2**15 - 1).to(torch.uint16),
            "u32": (unsigned + 2**31).to(torch.uint32),
            "u64": (unsigned + 2**40).to(torch.uint64),
            "f8_e5m2": ramp.to(torch.float8_e5m2),
            "f8_e4m3": ramp.to(torch.float8_e4m3fn),
            "f8_e4m3fnuz": ramp.to(torch.float8_e4m3fnuz),
            "f8_e5m2fnuz": ramp.to(torch.float8_e5m2fnuz),
        })
        if hasattr(torch, "float8_e8m0fnu"):
            tensors["f8_e8m0"] = torch.tensor([0.5, 1.0, 4.0]).to(torch.float8_e8m0fnu)
        if hasattr(torch, "float4_e2m1fn_x2"):
            packed = torch.tensor([[0x12, 0x34], [0x56, 0x78]], dtype=torch.uint8)
            tensors["f4"] = packed.view(torch.float4_e2m1fn_x2)
    return tensors


METADATA = {"format": "pt", "note": "h\u00e9llo \"quoted\"\n", "": "an empty key"}


def _bytes(tensor):
    import torch

    return tensor.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def write_reference(path, portable=False):
    """Writes the reference tensors and METADATA with Python's safetensors."""
    from safetensors.torch import save_file

    save_file(_reference_tensors(portable), path, metadata=METADATA)


def check_reference(path, portable=False):
    """Problems with `path` as Python's safetensors reads it: [] when it holds exactly the
    reference tensors (dtype, shape, bytes) and METADATA."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    expected, problems = _reference_tensors(portable), []
    got = load_file(path)
    if sorted(got) != sorted(expected):
        problems.append(f"names {sorted(got)}, expected {sorted(expected)}")
    for name in sorted(set(got) & set(expected)):
        a, b = got[name], expected[name]
        if a.dtype != b.dtype or a.shape != b.shape or _bytes(a) != _bytes(b):
            problems.append(f"{name}: {a.dtype} {tuple(a.shape)}, expected {b.dtype} "
                            f"{tuple(b.shape)}" + (" (bytes differ)" if a.dtype == b.dtype
                                                   and a.shape == b.shape else ""))
    with safe_open(path, framework="pt") as f:
        if f.metadata() != METADATA:
            problems.append(f"metadata {f.metadata()}, expected {METADATA}")
    return problems


def main(argv):
    if len(argv) >= 3 and argv[1] == "hostile":
        for name, expected in hostile_files(argv[2]):
            print(f"{name}\t{expected}")
        return 0
    portable = "--portable" in argv
    if len(argv) >= 3 and argv[1] == "reference":
        write_reference(argv[2], portable)
        return 0
    if len(argv) >= 3 and argv[1] == "check":
        problems = check_reference(argv[2], portable)
        print("\n".join(problems) or f"{argv[2]}: the reference tensors and metadata")
        return 1 if problems else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
