#!/usr/bin/env python3
"""A real one-node Slurm cluster in a temporary directory, for tests (stdlib only).

    with SlurmCluster(workdir) as c:              # c.env: os.environ plus SLURM_CONF
        job = c.sbatch(script)                    # the job id, a string
        c.wait_state(job, "RUNNING", 30)
        c.scancel_signal(job, "USR1")             # reaches every process of the job's steps
        state, restarts = c.wait_state(job, "COMPLETED", 60)

It runs munged, slurmctld and slurmd (Debian bookworm's Slurm 22.05, see scripts/deps.sh) in
the foreground as children of this process, everything under workdir/slurm (recreated), on
free TCP ports and with a private munge socket and key, so it clashes with no installed or
running Slurm. Whatever keeps it from starting (not root, a binary missing, a daemon that
exits or is not ready in time) raises SlurmUnavailable, whose message says why and ends with
the daemons' last log lines: a test reports it as a skip. Every wait is bounded. Teardown
cancels the jobs, stops the daemons (SIGTERM, then SIGKILL), SIGKILLs whatever still has this
cluster's SLURM_CONF in its environment (slurmstepd and the jobs' processes outlive slurmd)
and waits (5 s at most) for pid 1 to reap the slurmstepd zombies.

Facts that shaped it:
  * the daemons start in well under a second; the scheduler's first pass comes ~3 s after
    slurmctld starts, then every second with SchedulerParameters=sched_interval=1 (default 60);
  * a requeued job may not start again for 120 s unless AuthInfo has cred_expire (5, the
    least allowed): with it, a requeue cycle takes about 6 s;
  * a requeue truncates the job's output file unless the job asks for --open-mode=append;
  * client commands (sbatch, srun, scontrol, ...) need SLURM_CONF: use c.env;
  * munged wants its socket's directory executable by all, and --force to accept a key, seed
    or directory with looser permissions than it likes; run with -F it logs to stderr only.
"""
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
         "BOOT_FAIL", "DEADLINE"}


class SlurmUnavailable(Exception):
    """The cluster cannot run here; the message says why (a test reports it as a skip)."""


def _free_ports(n):
    """n ports nobody listens on, below the ephemeral range: outgoing connections (scontrol's,
    the daemons' own) take ephemeral ports, and one of those once took slurmd's from under it."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    ports = []
    for port in random.sample(range(10000, max(low, 10200)), 200):
        with socket.socket() as s:
            try:
                s.bind(("", port))
            except OSError:
                continue
        ports.append(port)
        if len(ports) == n:
            return ports
    raise SlurmUnavailable(f"found no {n} free TCP ports in 10000-{low}")


def _stat(pid):
    """(comm, state, start time in clock ticks since boot) of a process."""
    s = Path(f"/proc/{pid}/stat").read_text()
    rest = s[s.rindex(")") + 2:].split()
    return s[s.index("(") + 1:s.rindex(")")], rest[0], int(rest[19])


class SlurmCluster:
    def __init__(self, workdir, timeout=30):
        self.dir = Path(workdir).resolve() / "slurm"
        self.conf = self.dir / "slurm.conf"
        self.timeout = timeout  # for each step of the start-up
        self.host = socket.gethostname().split(".")[0]
        self.user = pwd.getpwuid(os.geteuid()).pw_name
        self.procs = {}  # daemon -> (Popen, its stdout and stderr)
        self.procs_left = []  # what teardown had to SIGKILL
        self.since = 1 << 62  # munged's start time, in clock ticks since boot
        env = {k: v for k, v in os.environ.items()  # not an outer Slurm job's variables
               if not k.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_", "SQUEUE_"))}
        env["PATH"] = os.pathsep.join([env.get("PATH", "/usr/bin:/bin"), "/usr/sbin", "/sbin"])
        self.env = dict(env, SLURM_CONF=str(self.conf))

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(self, *exc):
        self._stop()

    def _start(self):
        if os.geteuid() != 0:
            raise SlurmUnavailable("the Slurm test cluster needs root (slurmd runs the jobs)")
        missing = [t for t in ("munged", "slurmctld", "slurmd", "sbatch", "srun", "scontrol",
                               "scancel", "squeue", "sinfo")
                   if not shutil.which(t, path=self.env["PATH"])]
        if missing:
            raise SlurmUnavailable(f"missing {' '.join(missing)} (scripts/deps.sh installs "
                                   "slurmctld slurmd slurm-client munge)")
        d, m = self.dir, self.dir / "munge"
        shutil.rmtree(d, ignore_errors=True)
        for sub in (m, d / "state", d / "spool"):
            sub.mkdir(mode=0o755, parents=True)
        os.chmod(m, 0o755)  # munged: the socket's directory must be executable by all
        fd = os.open(m / "munge.key", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        os.write(fd, os.urandom(1024))
        os.close(fd)
        sock = m / "munge.socket"
        self._spawn("munged", "-F", "--force", f"--socket={sock}", f"--key-file={m}/munge.key",
                    f"--pid-file={m}/munged.pid", f"--log-file={m}/munged.log",
                    f"--seed-file={m}/munged.seed")
        self.since = _stat(self.procs["munged"][0].pid)[2]
        self._wait(sock.exists, "munged's socket")
        self.conf.write_text(self._config(sock))
        self._spawn("slurmctld", "-D", "-i", "-f", str(self.conf))
        self._wait(lambda: " is UP" in self._run("scontrol", "ping", check=False), "slurmctld")
        self._spawn("slurmd", "-D", "-N", self.host, "-f", str(self.conf))
        self._wait(lambda: self._run("sinfo", "-h", "-o", "%T", check=False).strip() == "idle",
                   "the node to be idle")

    def _config(self, sock):
        d, h, cpus = self.dir, self.host, max(2, os.cpu_count() or 1)
        ctld_port, slurmd_port = _free_ports(2)
        conf = dict(
            ClusterName="hookforge-test", SlurmctldHost=f"{h}(127.0.0.1)",
            SlurmctldPort=ctld_port, SlurmdPort=slurmd_port, SlurmUser=self.user,
            AuthType="auth/munge", AuthInfo=f"socket={sock},cred_expire=5",
            CredType="cred/munge", StateSaveLocation=f"{d}/state", SlurmdSpoolDir=f"{d}/spool",
            SlurmctldPidFile=f"{d}/slurmctld.pid", SlurmdPidFile=f"{d}/slurmd.pid",
            SlurmctldLogFile=f"{d}/slurmctld.log", SlurmdLogFile=f"{d}/slurmd.log",
            ProctrackType="proctrack/linuxproc", TaskPlugin="task/none", MpiDefault="none",
            SwitchType="switch/none", JobCompType="jobcomp/none",
            JobAcctGatherType="jobacct_gather/none",
            AccountingStorageType="accounting_storage/none",
            SelectType="select/cons_tres", SelectTypeParameters="CR_CPU",
            SchedulerParameters="sched_interval=1", JobRequeue=1, ReturnToService=2,
            SlurmdParameters="config_overrides",  # CPUs=2 even where nproc is 1
            KillWait=2, MinJobAge=600, MailProg="/bin/true",
            NodeName=f"{h} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=256 State=UNKNOWN",
            PartitionName=f"debug Nodes={h} Default=YES State=UP MaxTime=INFINITE")
        return "".join(f"{k}={v}\n" for k, v in conf.items())

    def _spawn(self, name, *args):
        out = self.dir / f"{name}.out"  # stdout and stderr: -D copies the log file there
        with open(out, "wb") as f:
            p = subprocess.Popen([name, *args], env=self.env, stdin=subprocess.DEVNULL,
                                 stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs[name] = (p, out)

    def _wait(self, ready, what):
        deadline = time.monotonic() + self.timeout
        while not ready():
            dead = [f"{n} exited with status {p.returncode}" for n, (p, _) in self.procs.items()
                    if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = ", ".join(dead) or f"timed out after {self.timeout} s"
                logs = "".join(f"\n    {out.name}: {line}" for _, out in self.procs.values()
                               for line in out.read_text(errors="replace").splitlines()[-8:])
                raise SlurmUnavailable(f"{why} while waiting for {what}:{logs}")
            time.sleep(0.1)

    def _run(self, *argv, check=True, timeout=30):
        try:
            r = subprocess.run(argv, env=self.env, capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            if check:
                raise
            return ""
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.strip()}")
        return r.stdout

    def sbatch(self, script_path, *args, options=()):
        """Submits the script with arguments args (and sbatch's options); the job id."""
        return self._run("sbatch", "--parsable", *options, str(script_path), *args) \
            .strip().split(";")[0]

    def job_state(self, job_id):
        """(JobState, Restarts) of the job, e.g. ("RUNNING", 0)."""
        out = self._run("scontrol", "show", "job", "-o", str(job_id))
        fields = dict(f.split("=", 1) for f in out.split() if "=" in f)
        return fields["JobState"], int(fields["Restarts"])

    def wait_state(self, job_id, states, timeout):
        """Waits until the job's state is one of states; (state, restarts). Raises TimeoutError,
        or RuntimeError when the job ends in another state."""
        states = {states} if isinstance(states, str) else set(states)
        deadline = time.monotonic() + timeout
        while True:
            state, restarts = self.job_state(job_id)
            if state in states:
                return state, restarts
            if state in FINAL or time.monotonic() > deadline:
                raise (RuntimeError if state in FINAL else TimeoutError)(
                    f"job {job_id} is {state} (restarts {restarts}), not {sorted(states)}")
            time.sleep(0.2)

    def scancel_signal(self, job_id, sig="USR1"):
        """Signals every process of the job's steps (not the batch shell)."""
        self._run("scancel", f"--signal={sig}", str(job_id))

    def _stop(self):
        if "slurmctld" in self.procs and self.procs["slurmctld"][0].poll() is None:
            self._run("scancel", f"--user={self.user}", check=False, timeout=10)
            deadline = time.monotonic() + 10
            while self._run("squeue", "-h", check=False, timeout=10).strip() \
                    and time.monotonic() < deadline:
                time.sleep(0.2)
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name, (None,))[0]
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(5)
        deadline = time.monotonic() + 5
        while (left := self._ours()) and time.monotonic() < deadline:
            for pid, zombie in left:
                if not zombie and pid not in self.procs_left:
                    self.procs_left.append(pid)
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            time.sleep(0.1)

    def _ours(self):
        """(pid, is a zombie) of the processes that have this cluster's SLURM_CONF in their
        environment, and of the zombie slurmstepd processes started since munged."""
        mark, found = f"SLURM_CONF={self.conf}".encode(), []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                comm, state, start = _stat(pid)
                if state == "Z":
                    if comm == "slurmstepd" and start >= self.since:
                        found.append((int(pid), True))
                elif int(pid) != os.getpid() and \
                        mark in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                    found.append((int(pid), False))
            except (OSError, ValueError, IndexError):
                pass
        return found


def _selftest():
    with tempfile.TemporaryDirectory(prefix="slurm-selftest-") as tmp:
        tmp, t0 = Path(tmp), time.monotonic()
        with SlurmCluster(tmp) as c:
            print(f"cluster up in {time.monotonic() - t0:.2f} s")
            out = tmp / "requeue.out"  # rank 0 of the first attempt requeues the job
            (tmp / "requeue.sh").write_text(f"""#!/bin/bash
#SBATCH --ntasks=2 --requeue --open-mode=append --output={out}
srun bash -c 'echo rank $SLURM_PROCID of $SLURM_NTASKS local $SLURM_LOCALID nodes \
$SLURM_JOB_NODELIST restart ${{SLURM_RESTART_COUNT:-0}}
if [ "${{SLURM_RESTART_COUNT:-0}}" = 0 ]; then
  [ $SLURM_PROCID = 0 ] && scontrol requeue $SLURM_JOB_ID; sleep 30
fi'
""")
            t1, seen = time.monotonic(), []
            job = c.sbatch(tmp / "requeue.sh")
            while time.monotonic() - t1 < 90 and (not seen or seen[-1][1][0] not in FINAL):
                state = c.job_state(job)
                if not seen or seen[-1][1] != state:
                    seen.append((time.monotonic() - t1, state))
                time.sleep(0.1)
            print(f"job {job}:", ", ".join(f"{s}/{r} at {t:.1f} s" for t, (s, r) in seen))
            text = out.read_text()
            print(text, end="")
            assert seen[-1][1] == ("COMPLETED", 1), seen
            assert all(f"rank {i} of 2 local {i} nodes {c.host} restart {r}" in text
                       for i in (0, 1) for r in (0, 1)), text
            requeued = next(t for t, (s, r) in seen if r == 1)
            rerun = next(t for t, (s, r) in seen if (s, r) == ("RUNNING", 1))
            print(f"requeue cycle (requeued to running again) {rerun - requeued:.1f} s, "
                  f"submit to COMPLETED {seen[-1][0]:.1f} s")

            out = tmp / "usr1.out"  # not `sleep 60 & wait`: USR1 would reach sleep too
            (tmp / "usr1.sh").write_text(f"""#!/bin/bash
#SBATCH --ntasks=2 --output={out}
srun bash -c 'trap "echo got USR1 $SLURM_PROCID; exit 0" USR1; echo ready $SLURM_PROCID
for i in $(seq 600); do sleep 0.1; done; echo no USR1 $SLURM_PROCID; exit 1'
""")
            t2 = time.monotonic()
            job = c.sbatch(tmp / "usr1.sh")
            while (not out.exists() or out.read_text().count("ready") < 2) \
                    and time.monotonic() - t2 < 30:
                time.sleep(0.1)
            c.scancel_signal(job, "USR1")
            c.wait_state(job, "COMPLETED", 30)
            text = out.read_text()
            print(text, end="")
            assert "got USR1 0" in text and "got USR1 1" in text, text
            print(f"USR1 job: submit to COMPLETED {time.monotonic() - t2:.1f} s")
        print(f"torn down; SIGKILLed leftovers: {c.procs_left or 'none'}; "
              f"total {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    try:
        _selftest()
    except SlurmUnavailable as e:
        print("SKIPPED:", e)
        sys.exit(77)
