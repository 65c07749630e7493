#!/usr/bin/env python3
"""Checks the code blocks of README.md and docs/ (DEVELOPERS.md, "Doc snippets").

    snippets.py --config snippets.json [--jobs N] [--only-quotes] [FILE.md...]

Every ```cpp block compiles (-fsyntax-only, C++20, against include/ and, where it reaches
a torch header, LibTorch); a compile-error block fails and the ```text block after it quotes
the compiler; a text block marked `output CASE` quotes a case of tests/compile_fail; every
```yaml block passes `hookforge-run --check`. Each message names the block as FILE:LINE.
The config (JSON, written by tests/CMakeLists.txt) holds the compiler, LibTorch's flags, the
precompiled <torch/types.h> and hookforge-run. Exits 0 when all pass, 1 when one fails, 77
(skipped) when none fails but some could not be checked here, saying why. The blocks of one
prelude that opens a function share compiler runs (snippet_compiler.py, "groups").
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for the import below
from snippet_compiler import (ROOT, Compiler, check_group, first_errors, function_start, groups_of,
                              refresh_quote)

FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
TORCH = re.compile(r"#\s*include\s*[<\"](torch/|hookforge/(torch|hooks|images|distributed|run)[/.])")
DISTRIBUTED = re.compile(r"#\s*include\s*[<\"]hookforge/(distributed|run)[/.]")
USER_FILE = "example.cpp"  # a compile-error block's name in its quote: stable as the page moves
KINDS = ("continue", "prelude", "file", "compile-error", "skip", "yaml-into", "output")


class Block:
    def __init__(self, path, fence, lang, code, directives, end):
        self.path, self.fence, self.lang, self.code, self.end = path, fence, lang, code, end
        self.directives = directives  # {kind: argument}
        self.quote = None  # the ```text block after a compile-error block

    @property
    def where(self):
        return f"{self.path}:{self.fence}"


def directives_of(line, where):
    match = MARKER.match(line)
    if not match:
        return {}
    result = {}
    for part in filter(None, (p.strip() for p in match.group(1).split(";"))):
        kind, _, arg = part.partition(" ")
        if kind not in KINDS:
            raise SystemExit(f"{where}: unknown snippet directive '{kind}' (known: {', '.join(KINDS)})")
        result[kind] = arg.strip()
    return result


def parse(path):
    """The fenced blocks of a Markdown file, each with the directives of the line above it."""
    lines = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, lang = match.groups()
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        code = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:j]]
        where = f"{path}:{i + 1}"
        blocks.append(Block(path, i + 1, lang, code, directives_of(lines[i - 1], where) if i else {}, j))
        i = j + 1
    for a, b in zip(blocks, blocks[1:]):
        if "compile-error" in a.directives and b.lang == "text":
            a.quote = b
    return blocks


# --- the units: what one compiler run checks ---------------------------------------------------


class Unit:
    def __init__(self, blocks, prelude):
        self.blocks, self.prelude = blocks, prelude

    @property
    def first(self):
        return self.blocks[0]

    def source(self, error_case):
        # A prelude holds the includes and declarations a reader need not see; where it has a
        # line `// snippet`, the blocks go there (inside the function it opens), else after it.
        if not self.prelude:
            return "\n".join(self.body(error_case)) + "\n"
        lines, cut = self.prelude_lines()
        name = f"tests/docs/preludes/{self.prelude}.hpp"
        text = [f'#line 1 "{name}"'] + lines[:cut] + self.body(error_case)
        return "\n".join(text + [f'#line {cut + 2} "{name}"'] + lines[cut + 1:]) + "\n"

    def body(self, error_case):
        """The blocks, each after a #line naming its Markdown line (or example.cpp's)."""
        text, line = [], 1
        for block in self.blocks:
            text.append(f'#line {line} "{USER_FILE}"' if error_case else f'#line {block.fence + 1} "{block.path}"')
            text += block.code
            line += len(block.code)
        return text

    def prelude_lines(self):
        """The prelude's lines (#pragma once kept as an empty line: GCC warns of it in a main
        file) and the index of its line `// snippet` (its length where it has none)."""
        lines = ["" if line.strip() == "#pragma once" else line
                 for line in open(prelude_path(self.prelude), encoding="utf-8").read().split("\n")]
        return lines, next((i for i, line in enumerate(lines) if line.strip() == "// snippet"), len(lines))

    def function_start(self):
        """The prelude's line that opens the function the blocks go in, or None."""
        lines, cut = self.prelude_lines()
        return function_start(lines, cut) if cut < len(lines) else None

    def reaches(self, pattern):
        text = "\n".join(line for block in self.blocks for line in block.code)
        return bool(pattern.search(text + prelude_text(self.prelude)))


def prelude_path(name):
    return os.path.join(ROOT, "tests", "docs", "preludes", name + ".hpp")


def prelude_text(name):
    """A prelude's text with the preludes it includes."""
    if not name:
        return ""
    text = open(prelude_path(name), encoding="utf-8").read()
    nested = re.findall(r'#\s*include\s*"tests/docs/preludes/(\w+)\.hpp"', text)
    return text + "".join(prelude_text(n) for n in nested)


def units_of(blocks, problems):
    units = []
    for block in blocks:
        if block.lang != "cpp":
            continue
        d = block.directives
        if "continue" in d:
            if not units or units[-1] is None:
                problems.append(f"{block.where}: 'continue' with no compiled cpp block before it on the page")
                continue
            units[-1].blocks.append(block)
        elif "skip" in d:
            print(f"{block.where}: skipped: {d['skip'] or 'no reason given'}")
            units.append(None)
        elif "file" in d:
            path = os.path.join(ROOT, d["file"])
            if not os.path.isfile(path):
                problems.append(f"{block.where}: the file it quotes, {d['file']}, does not exist")
            elif open(path, encoding="utf-8").read().rstrip("\n").split("\n") != block.code:
                problems.append(f"{block.where}: differs from {d['file']}, which it quotes; copy the file into the block")
            units.append(None)
        else:
            prelude = d.get("prelude")
            if prelude and not os.path.isfile(prelude_path(prelude)):
                problems.append(f"{block.where}: no prelude tests/docs/preludes/{prelude}.hpp")
                prelude = None
            units.append(Unit([block], prelude))
    return [u for u in units if u is not None]


def check_units(units, compiler, write):
    """One unit as check_unit checks it, or a group of units (snippet_compiler.groups_of) in
    one compiler run; returns (problems, skipped reasons, new quotes), lists."""
    def alone(unit):
        return listed(check_unit, unit, compiler, write)

    torch = units[0].reaches(TORCH)
    if len(units) == 1 or (torch and compiler.torch is None):
        return tuple(sum(lists, []) for lists in zip(*map(alone, units)))
    path = os.path.join(compiler.tmp, f"group{next(compiler.serial)}", "snippets.cpp")
    os.makedirs(os.path.dirname(path))
    return check_group(units, compiler, compiler.command(torch, units[0].reaches(DISTRIBUTED)), path, alone)


def is_error_case(unit):
    return any("compile-error" in b.directives for b in unit.blocks)


def as_lists(found, skip, update):
    return found, [skip] if skip else [], [update] if update else []


def listed(check, *args):
    """CHECK's result as check_units gives it."""
    return as_lists(*check(*args))


def check_unit(unit, compiler, write):
    """Compiles a unit; returns (problems, skipped reason, new quote or None)."""
    error_case = is_error_case(unit)
    torch = unit.reaches(TORCH)
    if torch and compiler.torch is None:
        return [], f"{unit.first.where}: needs LibTorch, not found by CMake", None
    path = os.path.join(compiler.tmp, f"unit{next(compiler.serial)}", USER_FILE if error_case else "snippet.cpp")
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as out:
        out.write(unit.source(error_case))
    # A compile-error block compiles as a reader's file would, without the precompiled header,
    # whose name would show in the include chain of the message.
    command = compiler.command(torch, unit.reaches(DISTRIBUTED), pch=not error_case)
    code, output = compiler.run(command + [path])
    if not error_case:
        if code == 0:
            return [], None, None
        return [f"{unit.first.where}: does not compile:\n    " + "\n    ".join(first_errors(output))], None, None
    if code == 0:
        return [f"{unit.first.where}: marked compile-error, but it compiles"], None, None
    quote = unit.blocks[-1].quote
    if quote is None:
        return [f"{unit.first.where}: a compile-error block needs the ```text block quoting the compiler after it"], None, None
    return compare_quote(quote, output, write)


def compare_quote(quote, output, write):
    fresh = refresh_quote(quote.code, output)
    if fresh == quote.code:
        return [], None, None
    if write:
        return [], None, (quote, fresh)
    diff = "\n".join(f"    - {line}" for line in quote.code) + "\n" + "\n".join(f"    + {line}" for line in fresh)
    return [f"{quote.where}: the quoted compiler output is stale (scripts/doc_compiler_output.py --write):\n{diff}"], None, None


def check_output_quote(block, compiler, write):
    """A text block marked `output CASE [clang] [c++2c]`: CASE's output with HOOKFORGE_SHOULD_FAIL."""
    words = block.directives["output"].split()
    if not words:
        return [f"{block.where}: 'output' needs the compile-fail case it quotes"], None, None
    case, options = words[0], set(words[1:])
    cxx = compiler.config.get("clang") if "clang" in options else None
    if "clang" in options and not cxx:
        return [], f"{block.where}: quotes Clang, which CMake did not find", None
    torch = bool(TORCH.search(open(os.path.join(ROOT, case), encoding="utf-8").read()))
    if torch and compiler.torch is None:
        return [], f"{block.where}: quotes a torch case, and LibTorch was not found", None
    std = "c++2c" if "c++2c" in options else "c++20"
    command = compiler.command(torch, False, std, cxx, pch=False) + compiler.config.get("yaml_flags", [])
    compiler_case = compiler.run(command + ["-Itests/compile_fail", "-DHOOKFORGE_SHOULD_FAIL", case])
    code, output = compiler_case[0], compiler_case[1].replace("tests/compile_fail/", "")
    if code == 0:
        return [f"{block.where}: {case} compiles with HOOKFORGE_SHOULD_FAIL"], None, None
    return compare_quote(block, output, write)


# --- YAML -----------------------------------------------------------------------------------


def merge(base, fragment):
    """The fragment over the base: mappings merged key by key, except an entry naming another
    _target, which replaces the base's (its parameters are another class's)."""
    if isinstance(fragment, dict) and "_target" in fragment and base.get("_target") != fragment["_target"]:
        return fragment
    if isinstance(base, dict) and isinstance(fragment, dict):
        return {**base, **{k: merge(base[k], v) if k in base else v for k, v in fragment.items()}}
    return fragment


def yaml_loader():
    """PyYAML's safe loader reading booleans as YAML 1.2 does (true, false), as yaml-cpp does:
    `buffers: off` stays the string off."""
    global yaml
    import yaml  # only here: a plain block needs no PyYAML

    class Loader(yaml.SafeLoader):
        pass

    Loader.yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"]
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                 list("tTfF"))
    return Loader


def check_yaml(block, config, tmp, index):
    run = config.get("run")
    if not run:
        return [], f"{block.where}: needs hookforge-run, which this build does not make", None
    path = os.path.join(tmp, f"config{index}.yaml")
    text = "\n".join(block.code) + "\n"
    if "yaml-into" in block.directives:
        loader = yaml_loader()
        base = yaml.load(open(os.path.join(ROOT, block.directives["yaml-into"]), encoding="utf-8"), loader)
        text = yaml.safe_dump(merge(base, yaml.load(text, loader)), sort_keys=False)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
    result = subprocess.run([run, "--check", path], cwd=ROOT, capture_output=True, text=True, timeout=300)
    if result.returncode == 0:
        return [], None, None
    output = result.stdout + result.stderr
    if "yaml-into" in block.directives:
        output = output.replace(path, f"(block merged into {block.directives['yaml-into']})")
    else:
        output = re.sub(re.escape(path) + r":(\d+)", lambda m: f"{block.path}:{block.fence + int(m.group(1))}", output)
    lines = [line for line in output.splitlines() if line.strip()][-8:]
    return [f"{block.where}: hookforge-run --check refuses it:\n    " + "\n    ".join(lines)], None, None


# --- driver ---------------------------------------------------------------------------------


def markdown_files():
    files = ["README.md"]
    for folder, _, names in sorted(os.walk(os.path.join(ROOT, "docs"))):
        files += sorted(os.path.relpath(os.path.join(folder, n), ROOT) for n in names if n.endswith(".md"))
    return files


def rewrite(updates):
    """Replaces quotes in place. The file is read again, and each quote found by its text
    (nearest its old place), since the page may have changed while the compiler ran."""
    for path in sorted({q.path for q, _ in updates}):
        full = os.path.join(ROOT, path)
        lines = open(full, encoding="utf-8").read().split("\n")
        for quote, fresh in updates:
            if quote.path != path:
                continue
            n = len(quote.code)
            starts = [i for i in range(len(lines) - n - 1) if FENCE.match(lines[i]) and FENCE.match(lines[i]).group(2) == "text"
                      and [l.strip() for l in lines[i + 1:i + 1 + n]] == [l.strip() for l in quote.code]]
            if not starts:
                print(f"{quote.where}: the quote changed while it was checked; not rewritten")
                continue
            i = min(starts, key=lambda k: abs(k + 1 - quote.fence))
            indent = FENCE.match(lines[i]).group(1)
            lines[i + 1:i + 1 + n] = [indent + line if line else line for line in fresh]
            print(f"{quote.where}: quote rewritten")
        with open(full, "w", encoding="utf-8") as out:
            out.write("\n".join(lines))


def submit(pool, files, compiler, args, write):
    """Starts the checks of FILES' blocks; returns the jobs, the problems found before
    compiling and the number of blocks of each kind."""
    problems, counts, units, later = [], {}, [], []

    def count(kind):
        counts[kind] = counts.get(kind, 0) + 1

    for path in files:
        blocks = parse(path)
        for unit in units_of(blocks, problems):
            if args.only_quotes and not is_error_case(unit):
                continue
            count("cpp compile-error" if is_error_case(unit) else ("cpp torch" if unit.reaches(TORCH) else "cpp"))
            units.append(unit)
        for block in blocks:
            if block.lang == "text" and "output" in block.directives:
                count("compiler output quote")
                later.append((check_output_quote, block, compiler, write))
            elif block.lang == "yaml" and not args.only_quotes:
                if "skip" in block.directives:
                    print(f"{block.where}: skipped: {block.directives['skip'] or 'no reason given'}")
                    continue
                count("yaml-into" if "yaml-into" in block.directives else "yaml")
                later.append((check_yaml, block, compiler.config, compiler.tmp, next(compiler.serial)))
    # The units of one function prelude share compiler runs; the largest groups start first.
    groups = groups_of(units, lambda u: None if is_error_case(u) else (u.reaches(TORCH), u.reaches(DISTRIBUTED)))
    groups.sort(key=lambda g: (-len(g), not g[0].reaches(TORCH)))
    jobs = [pool.submit(check_units, group, compiler, write) for group in groups]
    return jobs + [pool.submit(listed, *task) for task in later], problems, counts


def in_page_order(files):
    """A sort key for messages that start with FILE:LINE."""
    def key(text):
        where = re.match(r"(.*?):(\d+):", text)
        return (files.index(where.group(1)), int(where.group(2))) if where and where.group(1) in files else (-1, 0)
    return key


def main(argv=None, write=False):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="snippets.json, written by CMake in <build>/tests/docs")
    parser.add_argument("--jobs", type=int, default=max(2, (os.cpu_count() or 2) // 2))
    parser.add_argument("--only-quotes", action="store_true", help="only the blocks with quoted compiler output")
    parser.add_argument("files", nargs="*", help="Markdown files, relative to the repository (default: README.md, docs/)")
    args = parser.parse_args(argv)
    config = {**json.load(open(args.config, encoding="utf-8")), "path": args.config}
    start, files = time.monotonic(), args.files or markdown_files()
    skipped, updates = [], []
    with tempfile.TemporaryDirectory(prefix="hookforge-snippets-") as tmp:
        compiler = Compiler(config, tmp)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            jobs, problems, counts = submit(pool, files, compiler, args, write)
            for job in jobs:
                found, skip, update = job.result()
                problems, skipped, updates = problems + found, skipped + skip, updates + update
    if updates:
        rewrite(updates)
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    for problem in sorted(problems, key=in_page_order(files)):
        print(problem)
    print(f"{summary} ({compiler.runs} compiler runs); {len(problems)} failed, {len(skipped)} not checked here, "
          f"{time.monotonic() - start:.0f} s")
    if problems:
        return 1
    if skipped:
        print("skipped: " + "\n  ".join([""] + sorted(skipped, key=in_page_order(files))))
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
