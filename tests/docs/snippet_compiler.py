"""The compiler's side of tests/docs/snippets.py (DEVELOPERS.md, "Doc snippets"): its
commands, the precompiled header, groups of blocks compiled in one run, and the lines of
its messages that a quote may hold.
"""
import itertools
import os
import re
import subprocess
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MESSAGE_LINES = 12  # how many of the compiler's lines a quote may come from
GROUP_SIZE = 24  # the most blocks one compiler run checks (a failing group is halved)


class Compiler:
    def __init__(self, config, tmp):
        self.config, self.tmp = config, tmp
        self.cxx = config["cxx"]
        self.common = ["-fsyntax-only", "-Iinclude", "-iquote", "."] + config.get("flags", [])
        self.torch = config.get("torch_flags")  # None: no LibTorch here
        self.pch, self.pch_lock = None, threading.Lock()  # made by the first torch block
        self.runs, self.runs_lock = 0, threading.Lock()
        self.serial = itertools.count()  # names the files it compiles
        self.replacements = [(tmp + "/", ""), (ROOT + "/", "")]
        dirs = [f for f in (self.torch or []) if f.startswith("/")]
        self.replacements += [(d.rstrip("/") + "/", "") for d in sorted(dirs, key=len, reverse=True)]

    def command(self, torch, distributed, std="c++20", cxx=None, pch=True):
        command = [cxx or self.cxx, f"-std={std}"] + self.common
        if torch:
            command += self.torch
            if pch and std == "c++20" and cxx is None:
                with self.pch_lock:
                    if self.pch is None:
                        self.pch = torch_pch(self.cxx, self.torch, os.path.dirname(os.path.abspath(self.config["path"])))
                command += ["-include", self.pch]
        if distributed:
            command += self.config.get("distributed_flags", [])
        return command

    def run(self, command, cwd=ROOT):
        with self.runs_lock:
            self.runs += 1
        # LC_ALL=C: GCC quotes names with ASCII quotes, as the docs do.
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
        return result.returncode, self.normalise(result.stdout + result.stderr)

    def normalise(self, text):
        for old, new in self.replacements:
            text = text.replace(old, new)
        return text


TORCH_PCH = """// The headers most torch blocks reach, precompiled once (tests/docs/snippets.py).
#include <torch/torch.h>
#include <hookforge/torch.hpp>
#include <hookforge/hooks.hpp>
#include <hookforge/images.hpp>
"""


def torch_pch(cxx, flags, folder):
    """LibTorch's and hookforge's torch headers precompiled into FOLDER (kept while no header
    under include/ is newer): most of a torch block's compile time is theirs."""
    header = os.path.join(folder, "docs_torch.hpp")
    newest = max(os.path.getmtime(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(ROOT, "include")) for f in fs)
    if os.path.isfile(header + ".gch") and os.path.getmtime(header + ".gch") > newest:
        return header
    with open(header, "w", encoding="utf-8") as out:
        out.write(TORCH_PCH)
    result = subprocess.run([cxx, "-std=c++20", "-Iinclude"] + flags + ["-x", "c++-header", header, "-o", header + ".gch"],
                            cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"precompiling {header} failed:\n{result.stderr[-3000:]}")
    return header


# --- groups: blocks of one function prelude, one compiler run ---------------------------------
#
# A translation unit that reaches the torch headers costs about 8 s of CPU before its own
# lines: at its end GCC instantiates the templates that the (precompiled) headers' inline
# code uses. The blocks of a prelude that opens a function (`// snippet` in it) therefore
# share one: the prelude's declarations once, then for each block the prelude's function,
# in a namespace of its own, with the block where it is alone. A block sees what it sees
# alone: the same declarations, its own function's locals, no other block's names. A
# directive (#define, #if...) or an unbalanced brace would reach past its function: such a
# block is compiled alone. An #include may stay: in a function it compiles only where the
# header was already included (a header's namespaces cannot open there), a no-op in the
# group as alone. A group that fails is halved, down to single blocks, which are compiled
# exactly as alone and so give the same message.

DIRECTIVE = re.compile(r"^\s*#(?!\s*include\b)", re.M)
LITERALS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def function_start(lines, cut):
    """The line that opens a prelude's function (the last one before `// snippet` that starts
    in column 0), or None where the prelude opens none."""
    starts = [i for i in range(cut) if lines[i][:1].strip() and not lines[i].startswith(("//", "#", "}"))]
    if not starts or "(" not in lines[starts[-1]] or not balanced("\n".join(lines[:starts[-1]])):
        return None
    return starts[-1]


def balanced(code):
    code = LITERALS.sub(" ", code)
    depth = 0
    for char in code:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def groupable(unit):
    if unit.prelude is None or unit.function_start() is None:
        return False
    text = "\n".join(line for block in unit.blocks for line in block.code)
    return not DIRECTIVE.search(text) and balanced(text)


def groups_of(units, key):
    """UNITS in groups: those of one function prelude and one KEY (the flags they compile
    with; None: alone) together, in even parts of GROUP_SIZE at most; any other unit alone."""
    groups, shared = [], {}
    for unit in units:
        k = key(unit)
        if k is None or not groupable(unit):
            groups.append([unit])
        else:
            shared.setdefault((unit.prelude, k), []).append(unit)
    for group in shared.values():
        parts = -(-len(group) // GROUP_SIZE)
        groups += [group[i::parts] for i in range(parts)]
    return groups


def group_source(units):
    """The prelude's declarations, then per unit its function (in a namespace) with the unit in it."""
    lines, cut = units[0].prelude_lines()
    start = units[0].function_start()
    name = f"tests/docs/preludes/{units[0].prelude}.hpp"
    text = [f'#line 1 "{name}"'] + lines[:start]
    for n, unit in enumerate(units):
        text += [f"namespace hookforge_docs_block{n} {{", f'#line {start + 1} "{name}"'] + lines[start:cut]
        text += unit.body(False)
        text += [f'#line {cut + 2} "{name}"'] + lines[cut + 1:] + [f"}}  // namespace hookforge_docs_block{n}"]
    return "\n".join(text) + "\n"


def check_group(units, compiler, command, path, alone):
    """(problems, skipped, updates) of UNITS compiled together by COMMAND in PATH; where they
    fail, of each half, and so on down to single units, which ALONE checks."""
    if len(units) == 1:
        return alone(units[0])
    with open(path, "w", encoding="utf-8") as out:
        out.write(group_source(units))
    code, _ = compiler.run(command + [path])
    if code == 0:
        return [], [], []
    half = len(units) // 2
    results = [check_group(part, compiler, command, path, alone) for part in (units[:half], units[half:])]
    return tuple(a + b for a, b in zip(*results))


# --- reading the compiler's messages -----------------------------------------------------------


def first_errors(output, count=8):
    """The lines a reader needs: from the first line up to the first error and a few after."""
    lines = output.splitlines()
    first = next((i for i, line in enumerate(lines) if "error:" in line), 0)
    return lines[max(0, first - 4):first + count]


SOURCE_LINE = re.compile(r"^\s*\d*\s*\|")  # the compilers' copies of the source, never quoted


def diagnostics(output):
    return [line for line in output.splitlines() if not SOURCE_LINE.match(line)][:MESSAGE_LINES]


def message(output):
    """What a quote holds by default: GCC's output up to the first error (the instantiation
    and its `required from here`, the user's line), or Clang's first error and the notes after
    it, which end at the user's line."""
    lines = diagnostics(output)
    first = next((i for i, line in enumerate(lines) if "error:" in line), None)
    if first is None:
        return []
    notes = [line for line in lines[first + 1:] if ": note:" in line]
    if notes and "required from" not in "".join(lines[:first]):
        return [lines[first]] + notes[:3]
    return lines[:first + 1]


def wildcard(line):
    return re.compile(re.sub(r"\\d\+", r"\\d+", re.sub(r"\d+", r"\\d+", re.escape(line))) + "$")


def refresh_quote(quote, output):
    """The quote with each of its lines (a suffix of a line of the compiler's message) brought
    up to date; the whole message when a line matches no line even with other numbers."""
    lines = diagnostics(output)
    wanted = [line for line in quote if line.strip() and line.strip() != "..."]
    if not wanted:
        return message(output)
    result, at = [], 0
    for line in quote:
        if not line.strip() or line.strip() == "...":
            result.append(line)
            continue
        pattern = wildcard(line)
        found = next((k for k in range(at, len(lines)) if pattern.search(lines[k])), None)
        if found is None:
            return message(output)
        actual = lines[found]
        result.append(actual[len(actual) - len(pattern.search(actual).group(0)):])
        at = found + 1
    return result
