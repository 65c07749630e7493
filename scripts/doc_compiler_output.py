#!/usr/bin/env python3
"""Checks, or rewrites, the compiler output that README.md and docs/ quote.

    scripts/doc_compiler_output.py [--write] [--build DIR] [FILE.md...]

A quote is the ```text block after a `<!-- snippet: compile-error -->` block, or one marked
`<!-- snippet: output tests/compile_fail/CASE.cpp [clang] [c++2c] -->`; each of its lines
must be (the end of) a line of what the compiler says now, in order. Without --write, prints
each stale quote with the lines that would replace it and exits 1; with --write, rewrites
them in place. Compiles as the `docs` test of build folder DIR does (default build-torch2:
its tests/docs/snippets.json, written by CMake). See DEVELOPERS.md, "Doc snippets".
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
import snippets  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="rewrite the stale quotes in place")
    parser.add_argument("--build", default="build-torch2", help="a configured build folder (default build-torch2)")
    parser.add_argument("files", nargs="*", help="Markdown files, relative to the repository (default: all)")
    args = parser.parse_args()
    config = os.path.join(ROOT, args.build, "tests", "docs", "snippets.json")
    if not os.path.isfile(config):
        sys.exit(f"doc_compiler_output.py: no {config}; configure {args.build} with the tests on")
    code = snippets.main(["--config", config, "--only-quotes"] + args.files, write=args.write)
    sys.exit(1 if code == 1 else 0)


if __name__ == "__main__":
    main()
