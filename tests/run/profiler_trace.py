#!/usr/bin/env python3
"""ProfilerHook's traces from a config, read as Chrome trace JSON and by TensorBoard's PyTorch
profiler plugin (torch-tb-profiler's own loader).

    profiler_trace.py HOOKFORGE_RUN CONFIG TORCH_VERSION   (the Python of scripts/tensorboard.sh)

CONFIG (tests/run/profiler.yaml) records two cycles of wait 1, warm-up 1, active 2 over 16
steps, with a HookProfiler in the trainer's hooks. The run's <work_dir>/profiler holds two
traces named rank0.<ns>.pt.trace.json; each parses as JSON and holds two ProfilerStep#
ranges (steps 2, 3 and 6, 7) and the config-loaded LossLogger's ranges; torch-tb-profiler's
RunLoader reads the folder as a run with that worker's profiles and their steps.
On a LibTorch 1.x (Debian's 1.13, built without Kineto), `--check` refuses the config at the
ProfilerHook's entry instead, saying why.
"""
import json
import logging
import os
import subprocess
import sys
import tempfile


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    binary, config, torch_version = sys.argv[1], sys.argv[2], sys.argv[3]
    if int(torch_version.split(".")[0]) < 2:
        p = subprocess.run([binary, config, "--check"], capture_output=True, text=True)
        if p.returncode != 2 or "hooks.profiler" not in p.stderr or \
                "USE_KINETO=OFF" not in p.stderr:
            fail(f"LibTorch {torch_version}: --check exited {p.returncode}, expected 2 and "
                 f"the refusal at hooks.profiler:\n{p.stderr}")
        print(f"LibTorch {torch_version} has no Kineto; --check said:\n{p.stderr.strip()}")
        return
    work = tempfile.mkdtemp(prefix="hookforge-profiler-")
    out = os.path.join(work, "run")
    p = subprocess.run([binary, config, "--output", out], capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        fail(f"the run exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    if "ERROR" in p.stderr:
        fail(f"the run printed an error:\n{p.stderr}")
    folder = os.path.join(out, "profiler")
    traces = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    if len(traces) != 2 or not all(t.startswith("rank0.") and t.endswith(".pt.trace.json")
                                   for t in traces):
        fail(f"{folder} holds {traces}, expected two rank0.<ns>.pt.trace.json")
    expected_steps = [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]
    for name, steps in zip(traces, expected_steps):
        events = json.load(open(os.path.join(folder, name)))["traceEvents"]
        ranges = [e["name"] for e in events if e.get("cat") == "user_annotation"]
        got = [r for r in ranges if r.startswith("ProfilerStep#")]
        hooks = [r for r in ranges if r.startswith("hook: LossLogger.log@on_post_step")]
        if got != steps or len(hooks) != 2:
            fail(f"{name}: steps {got}, LossLogger ranges {len(hooks)}; ranges {sorted(set(ranges))}")
    print(f"{len(traces)} traces: steps {expected_steps}, each with the hooks' ranges")
    if "top ops by self CPU time" not in p.stdout:
        fail(f"no table in the run's output:\n{p.stdout}")

    # torch-tb-profiler, the plugin `tensorboard --logdir <run>` uses, reads the folder.
    logging.disable(logging.WARNING)
    from torch_tb_profiler import io
    from torch_tb_profiler.profiler.loader import RunLoader
    run = RunLoader("profiler", folder, io.Cache()).load()
    profiles = [p for p in run.get_profiles() if p is not None and p.worker == "rank0"]
    if len(profiles) != 2:
        fail(f"torch-tb-profiler loaded {len(run.get_profiles())} profiles: "
             f"{[(p.worker, p.span) for p in run.get_profiles() if p is not None]}")
    for profile in profiles:
        steps = [row[0] for row in (profile.overview or {}).get("steps", {}).get("rows", [])]
        if not profile.views or len(steps) != 2:
            fail(f"torch-tb-profiler: span {profile.span} has views {profile.views}, "
                 f"overview steps {steps}")
    print("torch-tb-profiler: 2 spans of worker rank0, views "
          f"{[v.display_name for v in profiles[0].views]}, steps "
          f"{[row[0] for row in profiles[0].overview['steps']['rows']]}")


if __name__ == "__main__":
    main()
