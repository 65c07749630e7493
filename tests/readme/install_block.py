#!/usr/bin/env python3
"""The README's install block, as written: its shell commands run in a copy of the sources with
HOME in a scratch folder, then every find_package line of the README's CMake block configures
against the installed package, and the installed hookforge-run checks its embedded default.

  install_block.py SOURCE_DIR [CMAKE_PREFIX_PATH]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def blocks_after(text, marker, language):
    """The fenced blocks of `language` after the first line holding `marker`."""
    start = text.find(marker)
    if start < 0:
        fail(f"README.md: no '{marker}'")
    return re.findall(rf"```{language}\n(.*?)```", text[start:], re.S)


def main(argv):
    source = argv[1]
    torch_prefix = argv[2] if len(argv) > 2 else ""
    with open(os.path.join(source, "README.md")) as f:
        readme = f.read()
    shell = blocks_after(readme, "Install it to a prefix", "sh")[0]
    cmake = blocks_after(readme, "then find it from your project", "cmake")[0]
    finds = [line.split("#")[0].strip() for line in cmake.splitlines() if line.startswith("find_package(")]
    if len(finds) < 8 or not any("COMPONENTS hooks" in f for f in finds):
        fail(f"README.md's CMake block lists {len(finds)} find_package lines, without the hooks component")

    with tempfile.TemporaryDirectory() as tmp:
        copy, home = os.path.join(tmp, "hookforge"), os.path.join(tmp, "home")
        os.makedirs(home)
        shutil.copytree(source, copy, ignore=lambda d, names: [
            n for n in names if n == ".git" or (d == source and n.startswith("build")) or n == "runs"])
        env = dict(os.environ, HOME=home, CCACHE_BASEDIR=copy)
        # ccache's folder is found through HOME: keep the real one, or the scratch HOME would
        # start an empty cache and the copy would compile everything again.
        if shutil.which("ccache") and "CCACHE_DIR" not in env:
            cache = subprocess.run(["ccache", "--get-config", "cache_dir"], capture_output=True, text=True)
            if cache.returncode == 0 and cache.stdout.strip():
                env["CCACHE_DIR"] = cache.stdout.strip()
        p = subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=copy, env=env,
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"the README's install block: exit {p.returncode}\n{shell}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
        prefix = os.path.join(home, ".local")

        consumer = os.path.join(tmp, "consumer")
        os.makedirs(consumer)
        with open(os.path.join(consumer, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.20)\nproject(readme_consumer CXX)\n" + "\n".join(finds) + "\n")
        prefixes = prefix + (";" + torch_prefix if torch_prefix else "")
        p = subprocess.run(["cmake", "-S", consumer, "-B", os.path.join(consumer, "build"),
                            f"-DCMAKE_PREFIX_PATH={prefixes}"], capture_output=True, text=True, env=env)
        if p.returncode != 0:
            fail(f"find_package from the README's CMake block: exit {p.returncode}\n{p.stdout[-1500:]}\n{p.stderr[-1500:]}")

        program = os.path.join(prefix, "bin", "hookforge-run")
        p = subprocess.run([program, "--check"], capture_output=True, text=True, cwd=tmp, env=env)
        if p.returncode != 0 or "warnings: none" not in p.stdout:
            fail(f"the installed hookforge-run --check: exit {p.returncode}: {p.stderr[-800:]}")
    print(f"the README's install block ran as written ({len(shell.strip().splitlines())} lines); "
          f"its {len(finds)} find_package lines configure against the installed package; the installed "
          f"hookforge-run checks its default config")


if __name__ == "__main__":
    main(sys.argv)
