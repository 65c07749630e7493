"""cli.py's two-hosts test and its machinery: TwoHosts makes two network namespaces joined by a
veth pair and starts one rank of a WORLD_SIZE=2 run in each, and finish waits for both
(cluster.py uses them too); the two hosts' run equals the 1-host 2-rank run bit for bit, a link
cut mid-run ends both ranks within the timeout naming the peer, and --resume with the link
back ends as a straight run."""
import os
import subprocess
import sys
import tempfile
import time

from cli_common import SHRUNK, closing, epoch_rows, fail, run


class TwoHosts:
    """Two network namespaces joined by a veth pair, as two machines: host 0 at 10.231.N.1,
    host 1 at 10.231.N.2 (N from the pid; addresses inside the namespaces only). Removed on exit."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.names = [f"hf{tag}h0", f"hf{tag}h1"]
        self.links = [f"hf{tag}v0", f"hf{tag}v1"]
        net = 1 + os.getpid() % 250
        self.addresses = [f"10.231.{net}.1", f"10.231.{net}.2"]

    def ip(self, *args):
        p = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
        if p.returncode != 0:
            raise OSError(f"ip {' '.join(args)}: {p.stderr.strip()}")

    def __enter__(self):
        try:
            for n in self.names:
                self.ip("netns", "add", n)
            self.ip("link", "add", self.links[0], "type", "veth", "peer", "name", self.links[1])
            for n, link, address in zip(self.names, self.links, self.addresses):
                self.ip("link", "set", link, "netns", n)
                self.ip("-n", n, "addr", "add", address + "/24", "dev", link)
                self.ip("-n", n, "link", "set", link, "up")
                self.ip("-n", n, "link", "set", "lo", "up")
        except (OSError, FileNotFoundError) as e:
            self.__exit__(None, None, None)
            print(f"SKIP: cannot make two network namespaces here ({e}); two-host run not tested")
            sys.exit(77)
        return self

    def __exit__(self, *_):
        for n in self.names:
            subprocess.run(["ip", "netns", "del", n], capture_output=True)

    def link(self, up):
        self.ip("-n", self.names[0], "link", "set", self.links[0], "up" if up else "down")

    def start(self, binary, args, port, logs):
        """Rank r on host r: WORLD_SIZE=2, MASTER_ADDR host 0, Gloo on the veth."""
        procs = []
        for rank in (0, 1):
            env = {"WORLD_SIZE": "2", "RANK": str(rank), "LOCAL_RANK": "0", "MASTER_ADDR": self.addresses[0],
                   "MASTER_PORT": str(port), "GLOO_SOCKET_IFNAME": self.links[rank], "OMP_NUM_THREADS": "1"}
            command = ["ip", "netns", "exec", self.names[rank], "env"] + [f"{k}={v}" for k, v in env.items()]
            log = open(f"{logs}.rank{rank}", "w+")
            procs.append((subprocess.Popen(command + [binary] + args, stdout=log, stderr=subprocess.STDOUT), log))
        return procs


def finish(procs, timeout):
    """Wait for both ranks (killing them past `timeout` s): their exit codes and output."""
    codes, texts = [], []
    deadline = time.time() + timeout
    for proc, log in procs:
        try:
            proc.wait(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.seek(0)
        codes.append(proc.returncode)
        texts.append(log.read())
        log.close()
    return codes, texts


def cmd_two_hosts(binary):
    """(e) Two hosts for real: one rank in each of two network namespaces, over a veth pair.
    Their run equals the 1-host 2-rank run (--nproc 2) bit for bit; the link cut in the middle
    of a run (after its first checkpoint) ends both ranks within distributed.timeout (10 s) plus
    a margin, exit 1, each naming the peer and its address; with the link back, --resume on both
    ends with the straight run's scores, bit for bit."""
    args = SHRUNK + ["--set", "trainer.params.epochs=4", "--set", "loaders.train.params.batch_size=8",
                     "--set", "distributed={timeout: 10}"]
    port = 20000 + os.getpid() % 20000
    with tempfile.TemporaryDirectory() as tmp, TwoHosts() as hosts:
        straight = os.path.join(tmp, "straight")
        p = run(binary, ["--nproc", "2"] + args + ["--output", straight], timeout=300)
        if p.returncode != 0:
            fail(f"the 1-host 2-rank run: exit {p.returncode}: {p.stderr[-800:]}")
        expected = epoch_rows(straight)
        scores = lambda text: closing(text).split("final: ", 1)[1].rsplit("|", 1)[0]  # not the time
        final_expected = scores(p.stdout)

        # Both hosts see one file system, as machines with a shared work directory do.
        two = os.path.join(tmp, "two")
        codes, texts = finish(hosts.start(binary, args + ["--output", two], port, os.path.join(tmp, "two")), 300)
        if codes != [0, 0]:
            fail(f"the 2-host run: exit codes {codes}: {texts[0][-800:]}\n{texts[1][-800:]}")
        if epoch_rows(two) != expected or scores(texts[0]) != final_expected:
            fail(f"the 2-host run's scores differ from the 1-host 2-rank run's:\n{epoch_rows(two)}\n{expected}")
        print(f"2 hosts ({hosts.addresses[0]}, {hosts.addresses[1]}), one rank each: the 1-host 2-rank "
              f"scores, bit for bit: {final_expected}")

        cut = os.path.join(tmp, "cut")
        procs = hosts.start(binary, args + ["--output", cut], port + 1, os.path.join(tmp, "cut"))
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(cut, "last_checkpoint")) and time.time() < deadline:
            time.sleep(0.005)
        if any(proc.poll() is not None for proc, _ in procs):
            fail("a rank ended before the link was cut")
        hosts.link(False)
        cut_at = time.time()
        codes, texts = finish(procs, 60)
        took = time.time() - cut_at
        hosts.link(True)
        if codes != [1, 1]:
            fail(f"the link cut: exit codes {codes}, expected [1, 1]: {texts[0][-600:]}\n{texts[1][-600:]}")
        if took > 10 + 15:
            fail(f"the link cut: the ranks took {took:.1f} s to end, more than the 10 s timeout and a margin")
        for rank in (0, 1):
            peer = 1 - rank
            said = f"failed on rank {rank} of 2 (gloo) with rank {peer} at {hosts.addresses[peer]}"
            if said not in texts[rank]:
                fail(f"rank {rank} after the cut did not say '{said}': {texts[rank][-800:]}")
        line = [l for l in texts[0].split("\n") if "failed on rank 0" in l][0]
        print(f"the link cut after the first checkpoint: both ranks exit 1 within {took:.1f} s: {line[:160]}...")

        codes, texts = finish(hosts.start(binary, args + ["--output", cut, "--resume"], port + 2,
                                          os.path.join(tmp, "resumed")), 300)
        if codes != [0, 0] or "resumed from" not in texts[0]:
            fail(f"--resume after the cut: exit codes {codes}: {texts[0][-800:]}\n{texts[1][-800:]}")
        if epoch_rows(cut) != expected or scores(texts[0]) != final_expected:
            fail(f"the resumed 2-host run's scores differ from the straight run's:\n{epoch_rows(cut)}\n{expected}")
        print("--resume on both hosts with the link back: the straight run's scores, bit for bit")
