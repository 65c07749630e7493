#!/usr/bin/env python3
"""hookforge-run under the launchers clusters use, for real (docs/distributed.md).

  cluster.py torchrun BIN PYTHON   PyTorch's own torchrun (PYTHON -m torch.distributed.run),
                                   2 ranks (--standalone, and the static rendezvous whose run
                                   id is "none"), --max-restarts 1: rank 1 SIGKILLed after the
                                   first checkpoint; the restarted attempt resumes by itself
                                   and ends with a straight torchrun run's rows, bit for bit,
                                   leaving no temporary file. A first attempt into another
                                   run's directory is refused, and so is its restart.
  cluster.py torchrun-two-hosts BIN PYTHON
                                   the same across two hosts (cli_hosts.py's network namespaces):
                                   --nnodes 2 with the c10d rendezvous, host 1's rank
                                   SIGKILLed; needs root and `ip netns` (else skipped)
  cluster.py slurm BIN             a one-node Slurm cluster (slurm_cluster.py) started here:
                                   a 2-task sbatch job under srun, sent USR1 (scancel
                                   --signal) after its first checkpoint, stops at a batch both
                                   ranks agree on, saves, requeues itself, and the requeued
                                   job resumes by itself and ends with the rows of a straight
                                   2-rank run (--nproc 2), bit for bit.

Exit 0: passed; 77: skipped, with the reason on stdout (no Slurm daemons here, no torchrun).
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_common import epoch_rows, fail, rows_written, run  # noqa: E402
from cli_hosts import TwoHosts, finish  # noqa: E402
from slurm_cluster import SlurmCluster, SlurmUnavailable  # noqa: E402

# 64 batches of 8 per rank and epoch: a second or so per epoch, time to act in one.
ARGS = ["--set", "data.train.params.count=1024", "--set", "data.val.params.count=64",
        "--set", "trainer.params.epochs=4", "--set", "loaders.train.params.batch_size=8"]


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(77)


def scores(stdout):
    """The last closing line's scores, without the wall time (an attempt stopped for a requeue
    closes too)."""
    lines = [l for l in stdout.split("\n") if "final: " in l]
    if not lines:
        fail(f"no closing line: {stdout[-1500:]}")
    return lines[-1].split("final: ", 1)[1].rsplit("|", 1)[0]


def leftovers(directory):
    """Temporary files of atomic writes (a checkpoint, the job file) left in `directory`."""
    found = []
    for root, _, files in os.walk(directory):
        found += [os.path.join(root, f) for f in files if ".tmp" in f]
    return found


def check_ends_as_straight(directory, text, expected, final_expected, after):
    """The run in `directory` (its output `text`) ended as the straight run did: every epoch's
    row and the closing line's scores equal, bit for bit; no temporary file left."""
    if epoch_rows(directory) != expected:
        fail(f"rows after {after} differ from the straight run's:\n{epoch_rows(directory)}\nvs\n{expected}")
    if scores(text) != final_expected:
        fail(f"final lines differ: {scores(text)} vs {final_expected}")
    if leftovers(directory):
        fail(f"temporary files left: {leftovers(directory)}")


def check_restarted(succeeded, exits, directory, text, expected, final_expected):
    """torchrun, after a rank was SIGKILLed: it succeeded (`exits` says how it ended), its
    restarted attempt said it resumed, and the run ended as the straight one."""
    if not succeeded:
        fail(f"torchrun after the SIGKILL: {exits}: {text[-3000:]}")
    if "hookforge-run: torchrun restart 1: resumed from" not in text:
        fail(f"the restarted attempt did not resume: {text[-3000:]}")
    check_ends_as_straight(directory, text, expected, final_expected, "the restart")


def wait_for(path, proc, seconds):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if proc is not None and proc.poll() is not None:
            fail(f"the run ended (exit {proc.returncode}) before {path} existed")
        if time.monotonic() > deadline:
            fail(f"no {path} after {seconds} s")
        time.sleep(0.005)


def free_port():
    """A port on 127.0.0.1 that was free a moment ago (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(python, binary, extra, output, log):
    """torchrun, 2 ranks of `binary`; `extra`: its options (a rendezvous, --max-restarts)."""
    command = [python, "-m", "torch.distributed.run", "--no-python", "--nproc-per-node", "2"] + \
              extra + [binary] + ARGS + ["--output", output]
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True)


def static(*extra):
    """torchrun's default (static) rendezvous on a free port: its run id is "none", and
    hookforge-run knows the job by its agent."""
    return ["--master-port", str(free_port())] + list(extra)


def rank_pid(launcher, rank):
    """The pid of torchrun's worker of `rank` (a child of the launcher with RANK=rank)."""
    for child in subprocess.run(["pgrep", "-P", str(launcher)], capture_output=True,
                                text=True).stdout.split():
        try:
            with open(f"/proc/{child}/environ", "rb") as f:
                if f"RANK={rank}".encode() in f.read().split(b"\0"):
                    return int(child)
        except OSError:
            pass
    return None


def cmd_torchrun(binary, python):
    if subprocess.run([python, "-c", "import torch.distributed.run"],
                      capture_output=True).returncode != 0:
        skip(f"{python} has no torch.distributed.run (torchrun)")
    with tempfile.TemporaryDirectory() as tmp:
        logs = lambda name: open(os.path.join(tmp, name + ".log"), "w+")
        straight = os.path.join(tmp, "straight")
        with logs("straight") as log:
            code = torchrun(python, binary, ["--standalone"], straight, log).wait(timeout=300)
            log.seek(0)
            text = log.read()
        if code != 0:
            fail(f"the straight torchrun run: exit {code}: {text[-1500:]}")
        expected, final_expected = epoch_rows(straight), scores(text)

        killed = os.path.join(tmp, "killed")
        with logs("killed") as log:
            proc = torchrun(python, binary, static("--max-restarts", "1"), killed, log)
            wait_for(os.path.join(killed, "last_checkpoint"), proc, 120)
            done = rows_written(killed)
            victim = rank_pid(proc.pid, 1)
            if victim is None:
                fail("no rank 1 among torchrun's children")
            os.kill(victim, signal.SIGKILL)
            killed_at = time.monotonic()
            code = proc.wait(timeout=300)
            log.seek(0)
            text = log.read()
        check_restarted(code == 0, f"exit {code}", killed, text, expected, final_expected)
        print(f"torchrun --max-restarts 1: rank 1 (pid {victim}) SIGKILLed after {done} epoch row(s) "
              f"and a checkpoint; the restart resumed by itself, exit 0 {time.monotonic() - killed_at:.1f} s "
              f"later; its {len(expected)} rows equal the straight torchrun run's, bit for bit; "
              f"no temporary file left")

        # A first attempt into another run's directory is refused, and so is its restart.
        with logs("refused") as log:
            code = torchrun(python, binary, ["--standalone", "--max-restarts", "1"], straight,
                            log).wait(timeout=300)
            log.seek(0)
            text = log.read()
        refusals = text.count("holds an earlier run")
        if code == 0 or refusals < 2 or "resumed from" in text:
            fail(f"torchrun into another run's directory: exit {code}, {refusals} refusals: {text[-2000:]}")
        if epoch_rows(straight) != expected:
            fail("the other run's rows changed")
        print(f"torchrun --max-restarts 1 into another run's directory: both attempts refused "
              f"(exit {code}), the run there unchanged")


def cmd_torchrun_two_hosts(binary, python):
    """Two hosts (cli_hosts.py's network namespaces), torchrun on each with the c10d rendezvous
    (--nnodes 2, one rank per host, --max-restarts 1): host 1's rank SIGKILLed after the
    first checkpoint; both agents restart their rank, which resumes by itself, and the rows
    equal a straight 2-rank run's (--nproc 2), bit for bit."""
    if subprocess.run([python, "-c", "import torch.distributed.run"],
                      capture_output=True).returncode != 0:
        skip(f"{python} has no torch.distributed.run (torchrun)")
    with tempfile.TemporaryDirectory() as tmp, TwoHosts() as hosts:
        straight = os.path.join(tmp, "straight")
        p = run(binary, ["--nproc", "2"] + ARGS + ["--output", straight], timeout=300)
        if p.returncode != 0:
            fail(f"the straight 2-rank run: exit {p.returncode}: {p.stderr[-800:]}")
        expected, final_expected = epoch_rows(straight), scores(p.stdout)
        output, port = os.path.join(tmp, "two"), free_port()
        agents = []
        for host in (0, 1):
            # The rendezvous store is served by host 0's agent (is_host: in a namespace, torchrun
            # cannot tell it is the endpoint's machine); Gloo and the agents use the veth.
            command = ["ip", "netns", "exec", hosts.names[host], "env",
                       f"GLOO_SOCKET_IFNAME={hosts.links[host]}", "OMP_NUM_THREADS=1",
                       python, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "1",
                       "--rdzv-backend", "c10d", "--rdzv-endpoint", f"{hosts.addresses[0]}:{port}",
                       "--rdzv-id", "two-hosts", "--rdzv-conf", f"is_host={'true' if host == 0 else 'false'}",
                       "--local-addr", hosts.addresses[host], "--max-restarts", "1", "--no-python",
                       binary] + ARGS + ["--output", output]
            log = open(os.path.join(tmp, f"host{host}.log"), "w+")
            agents.append((subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT), log))
        wait_for(os.path.join(output, "last_checkpoint"), agents[0][0], 180)
        victim = next((int(c) for c in subprocess.run(["pgrep", "-P", str(agents[1][0].pid)],
                                                     capture_output=True, text=True).stdout.split()), None)
        if victim is None:
            fail("no rank under host 1's torchrun")
        os.kill(victim, signal.SIGKILL)
        codes, texts = finish(agents, 300)
        text = "\n".join(texts)
        check_restarted(codes == [0, 0], f"exits {codes}", output, text, expected, final_expected)
        print(f"two hosts, torchrun --nnodes 2 (c10d rendezvous) --max-restarts 1: host 1's rank SIGKILLed "
              f"after the first checkpoint; both agents restarted, the run resumed by itself, exits 0; its "
              f"{len(expected)} rows equal the straight 2-rank run's, bit for bit")


SBATCH = """#!/bin/bash
#SBATCH --ntasks=2
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output={log}
srun {binary} {args} --output {output}
"""


def cmd_slurm(binary):
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        straight = os.path.join(tmp, "straight")
        p = run(binary, ["--nproc", "2"] + ARGS + ["--output", straight], timeout=300)
        if p.returncode != 0:
            fail(f"the straight 2-rank run: exit {p.returncode}: {p.stderr[-800:]}")
        expected, final_expected = epoch_rows(straight), scores(p.stdout)
        try:
            cluster = SlurmCluster(os.path.join(tmp, "cluster")).__enter__()
        except SlurmUnavailable as e:
            skip(f"no Slurm cluster here: {e}")
        try:
            output, log = os.path.join(tmp, "job"), os.path.join(tmp, "job.log")
            script = os.path.join(tmp, "job.sh")
            with open(script, "w") as f:
                f.write(SBATCH.format(log=log, binary=binary, args=" ".join(ARGS), output=output))
            job = cluster.sbatch(script)
            wait_for(os.path.join(output, "last_checkpoint"), None, 120)
            done = rows_written(output)
            cluster.scancel_signal(job, "USR1")
            signalled = time.monotonic()
            try:
                state, restarts = cluster.wait_state(job, "COMPLETED", 240)
            except (RuntimeError, TimeoutError) as e:
                state, restarts = str(e), -1
            took = time.monotonic() - signalled
        finally:
            cluster.__exit__(None, None, None)
        with open(log) as f:
            text = f.read()
        if state != "COMPLETED" or restarts != 1:
            fail(f"job {job}: {state} after {restarts} restarts: {text[-2000:]}")
        for line in ("hookforge-run: stopped by SIGUSR1 in epoch", f"Slurm job {job} requeued",
                     "hookforge-run: Slurm requeue 1: resumed from"):
            if line not in text:
                fail(f"no '{line}' in the job's output: {text[-2000:]}")
        stop = next(l for l in text.split("\n") if "stopped by SIGUSR1" in l)
        if "gnuplot failed" in text:  # the signal reaches every process of the step
            fail(f"the requeue signal ended MetricsPlot's gnuplot: {text[-2000:]}")
        check_ends_as_straight(output, text, expected, final_expected, "the requeue")
        # The usual retention (the default config's max_keep_ckpts: 2) covers the requeue's.
        kept = sorted(f for f in os.listdir(output) if f.endswith(".pt") and not f.startswith("best"))
        if len(kept) > 2:
            fail(f"checkpoints kept after the requeue: {kept}")
        print(f"sbatch --ntasks=2, srun: USR1 after {done} epoch row(s) and a checkpoint; "
              f"{stop.split('hookforge-run: ', 1)[1]}; the job requeued itself and completed "
              f"{took:.1f} s later; its {len(expected)} rows equal the straight 2-rank run's, bit for bit")


def main(argv):
    if len(argv) == 4 and argv[1] == "torchrun":
        cmd_torchrun(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "torchrun-two-hosts":
        cmd_torchrun_two_hosts(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "slurm":
        cmd_slurm(argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
