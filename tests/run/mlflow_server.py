#!/usr/bin/env python3
"""MLflowLogger against a real MLflow tracking server, read back with MLflow's own client.

    mlflow_server.py HOOKFORGE_RUN CONFIG    (run with the Python of scripts/mlflow.sh)

The test starts `mlflow server` (SQLite store, --serve-artifacts) on a free loopback port.
1. A straight run of CONFIG (tests/run/mlflow.yaml): every metric equals what LossLogger wrote
   to metrics.jsonl (epoch rows, HookProfiler's figures) or steps.csv (step rows), at the
   step of the epoch's end, each step once; the params are the config's values, flattened;
   the tags and the status (FINISHED); the artifacts metrics.csv, metrics.jsonl, config.yaml
   and the best checkpoint.
2. Killed (SIGKILL) after its second epoch, then --resume: the same MLflow run goes on, each
   step once, its values those of the straight run; FINISHED.
3. SIGTERM: KILLED. A run whose loss is not finite (CheckInvalidLoss): FAILED, with the error.
4. The server stopped after the first epoch and started again a few seconds later: the run
   trains on, says the server went away and came back, and the server ends with every metric.
5. The server down from the start, with a queue of 5: a warning, training goes on, the
   dropped metrics counted and said; with --strict the run fails before training.
6. HTTPS and credentials: a TLS proxy of the test's own in front of the server (a certificate
   made with openssl, its CA given by MLFLOW_TRACKING_SERVER_CERT_PATH) lets through only
   requests carrying the bearer token (MLFLOW_TRACKING_TOKEN) or the basic-auth user and
   password (MLFLOW_TRACKING_USERNAME, MLFLOW_TRACKING_PASSWORD): both runs arrive, over one
   connection each; a wrong token and an unknown CA are warnings, and the run trains on.
"""
import base64
import csv
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml
from auth_proxy import AuthProxy
from mlflow.tracking import MlflowClient


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, root):
        self.root, self.port, self.process = root, free_port(), None
        self.uri = f"http://127.0.0.1:{self.port}"

    def start(self):
        mlflow = os.path.join(os.path.dirname(sys.executable), "mlflow")
        self.log = open(os.path.join(self.root, "server.log"), "a")
        self.process = subprocess.Popen(
            [mlflow, "server", "--backend-store-uri", f"sqlite:///{self.root}/mlflow.db",
             "--serve-artifacts", "--artifacts-destination", f"{self.root}/artifacts",
             "--host", "127.0.0.1", "--port", str(self.port), "--workers", "1"],
            env=dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false"),
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                urllib.request.urlopen(self.uri + "/health", timeout=2).read()
                return
            except OSError:
                if self.process.poll() is not None:
                    fail(f"mlflow server exited {self.process.returncode}; see {self.root}/server.log")
                time.sleep(0.3)
        fail("mlflow server did not answer /health in 120 s")

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)
        self.process = None


def run(binary, args, expect=0, env=None):
    p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=600, env=env)
    if expect is not None and p.returncode != expect:
        fail(f"{' '.join(args)} exited {p.returncode}, expected {expect}:\n{p.stdout}\n{p.stderr}")
    return p


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def config_params(path, sets):
    """The config's scalars as written, by dotted key (sequence items by index), each
    --set KEY=VALUE applied, and system.work_dir as the run sets it: what the run's params
    must be. Read with PyYAML's composer, which keeps each scalar's text."""
    out = {}

    def walk(node, key):
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                walk(v, f"{key}.{k.value}" if key else k.value)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, f"{key}.{i}")
        else:
            out[key] = node.value

    walk(yaml.compose(open(path)), "")
    for assignment in sets:
        key, value = assignment.split("=", 1)
        out[key] = value
    return out


def mlflow_name(name):
    return re.sub(r"[^A-Za-z0-9_\-./: ]", "_", name)


def expected_metrics(directory, epoch_steps):
    """{key: {step: value}} from LossLogger's files, as MLflowLogger names them; an epoch's
    row at the step `epoch_steps` gives for it."""
    with open(os.path.join(directory, "metrics.jsonl")) as f:
        epoch_rows = [json.loads(line) for line in f]
    out = {}
    step_rows = rows(os.path.join(directory, "steps.csv"))
    for row in epoch_rows:
        step = epoch_steps.get(int(row["epoch"]))
        if step is None:
            fail(f"epoch {row['epoch']} of metrics.jsonl has no 'epoch' metric in MLflow")
        for column, value in row.items():
            if column.startswith("train_") or column.startswith("val_"):
                key = column.replace("_", "/", 1)
            elif column.startswith("lr_"):
                key = "lr/" + column[3:]
            else:
                key = mlflow_name(column)
            out.setdefault(key, {})[step] = math.nan if value is None else float(value)
    for row in step_rows:
        step = int(row["step"])
        for column, cell in row.items():
            if column == "loss" or column.startswith("lr"):
                out.setdefault("step/" + column.replace("lr_", "lr/"), {})[step] = float(cell)
    return out


def timing(key):  # wall times differ between a run and its resume
    return key == "epoch_seconds" or key.startswith("hook_ms/")


def logged(client, run_id):
    """{key: {step: value}}, failing on a step logged twice."""
    out = {}
    for key in client.get_run(run_id).data.metrics:
        series = {}
        for m in client.get_metric_history(run_id, key):
            if m.step in series:
                fail(f"{key}: step {m.step} logged twice")
            series[m.step] = m.value
        out[key] = series
    return out


def check_metrics(client, run_id, directory, label, skip_timing=False):
    got = logged(client, run_id)
    if "epoch" not in got:
        fail(f"{label}: no 'epoch' metric; metrics {sorted(got)}")
    want = expected_metrics(directory, {int(v): s for s, v in got["epoch"].items()})
    if sorted(got) != sorted(want):
        fail(f"{label}: metrics {sorted(got)}, LossLogger's files give {sorted(want)}")
    compared = 0
    for key, series in want.items():
        if skip_timing and timing(key):  # a resume times its first epoch's figures anew
            continue
        if sorted(got[key]) != sorted(series):
            fail(f"{label}: {key} at steps {sorted(got[key])}, the files at {sorted(series)}")
        for step, value in series.items():
            g = got[key][step]
            if not (math.isclose(g, value, rel_tol=1e-9, abs_tol=1e-12)
                    or (math.isnan(g) and math.isnan(value))):
                fail(f"{label}: {key} at step {step} is {g!r}, the files say {value!r}")
            compared += 1
    return got, compared


def only_run(client, experiment):
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        fail(f"no experiment {experiment!r}")
    runs = client.search_runs([exp.experiment_id])
    if len(runs) != 1:
        fail(f"experiment {experiment!r} has {len(runs)} runs, expected 1")
    return runs[0]


def wait_for_epochs(directory, n, process):
    path = os.path.join(directory, "metrics.jsonl")
    deadline = time.time() + 300
    while time.time() < deadline:
        if os.path.exists(path) and sum(1 for _ in open(path)) >= n:
            return
        if process.poll() is not None:
            fail(f"the run ended (exit {process.returncode}) before {n} epochs")
        time.sleep(0.05)
    fail(f"no {n} epochs in 300 s")


def main():
    binary, config = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="hookforge-mlflow-")
    server = Server(work)
    server.start()
    client = MlflowClient(tracking_uri=server.uri)
    uri = f"hooks.mlflow.params.tracking_uri={server.uri}"

    # 1. A straight run.
    straight = os.path.join(work, "straight")
    run(binary, [config, "--output", straight, "--set", uri])
    r = only_run(client, "hookforge-test")
    if r.info.status != "FINISHED":
        fail(f"straight run: status {r.info.status}")
    straight_metrics, compared = check_metrics(client, r.info.run_id, straight, "straight run")
    params = r.data.params
    want = config_params(config, [uri, f"system.work_dir={straight}"])
    if params != want:
        keys = sorted(set(params) | set(want))
        diff = [(k, params.get(k), want.get(k)) for k in keys if params.get(k) != want.get(k)]
        fail(f"params differ from the config's values (key, MLflow, config): {diff}")
    tags = r.data.tags
    for key, value in {"mlflow.runName": "espcn-small", "purpose": "test",
                       "mlflow.source.name": "hookforge"}.items():
        if tags.get(key) != value:
            fail(f"tag {key} is {tags.get(key)!r}, expected {value!r}")
    if not tags.get("hookforge.version"):
        fail(f"no hookforge.version tag: {sorted(tags)}")
    names = sorted(a.path for a in client.list_artifacts(r.info.run_id))
    checkpoints = [a.path for a in client.list_artifacts(r.info.run_id, "checkpoints")]
    if names != ["checkpoints", "config.yaml", "metrics.csv", "metrics.jsonl"] or \
            len(checkpoints) != 1 or not checkpoints[0].startswith("checkpoints/best_psnr_epoch_"):
        fail(f"artifacts {names}, checkpoints {checkpoints}")
    local = client.download_artifacts(r.info.run_id, "metrics.csv", work)
    if open(local, "rb").read() != open(os.path.join(straight, "metrics.csv"), "rb").read():
        fail("the metrics.csv artifact differs from the run's")
    print(f"straight run: {compared} metric values equal LossLogger's files, "
          f"{len(params)} params, status FINISHED, artifacts {names} + {checkpoints}")

    # 2. SIGKILL after two epochs, then --resume: the same MLflow run, each step once.
    killed = os.path.join(work, "killed")
    args = [config, "--output", killed, "--set", uri, "--set",
            "hooks.mlflow.params.experiment=resumed"]
    p = subprocess.Popen([binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_epochs(killed, 2, p)
    p.kill()
    p.wait()
    first = only_run(client, "resumed")
    if first.info.status != "RUNNING":
        fail(f"killed run: status {first.info.status}, expected RUNNING (no end was sent)")
    run(binary, args + ["--resume"])
    r = only_run(client, "resumed")
    if r.info.run_id != first.info.run_id or r.info.status != "FINISHED":
        fail(f"resumed: run {r.info.run_id} status {r.info.status}, expected "
             f"{first.info.run_id} FINISHED")
    resumed_metrics, compared = check_metrics(client, r.info.run_id, killed, "resumed run",
                                              skip_timing=True)
    for key, series in straight_metrics.items():
        if timing(key):
            continue
        if resumed_metrics[key] != series:
            fail(f"resumed run: {key} is {resumed_metrics[key]}, the straight run's {series}")
    print(f"killed after epoch 2 and resumed: the same MLflow run, each step once, "
          f"{compared} values equal the straight run's")

    # 3. SIGTERM: KILLED; a failure: FAILED, with the error.
    term = os.path.join(work, "term")
    args = [config, "--output", term, "--set", uri, "--set",
            "hooks.mlflow.params.experiment=terminated"]
    p = subprocess.Popen([binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    wait_for_epochs(term, 1, p)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=120)
    r = only_run(client, "terminated")
    if r.info.status != "KILLED":
        fail(f"SIGTERM: status {r.info.status}, expected KILLED")
    run(binary, args + ["--resume"])
    if only_run(client, "terminated").info.status != "FINISHED":
        fail("SIGTERM, then --resume: not FINISHED")
    failed = run(binary, [config, "--output", os.path.join(work, "failed"), "--set", uri,
                          "--set", "hooks.mlflow.params.experiment=failed",
                          "--set", "optimizer.params.lr=1.0e+30",
                          "--set", "trainer.params.training_runner.params.hooks="
                          '["${ref:hooks.logger}", "${ref:hooks.mlflow}", '
                          "{_target: CheckInvalidLoss}]"],
                 expect=None)
    if failed.returncode == 0:
        fail(f"a run with lr 1e30 and CheckInvalidLoss succeeded:\n{failed.stderr}")
    r = only_run(client, "failed")
    if r.info.status != "FAILED" or "loss" not in r.data.tags.get("hookforge.error", ""):
        fail(f"failed run: status {r.info.status}, tags {r.data.tags}")
    print(f"SIGTERM: KILLED, then FINISHED after --resume; a failed run: FAILED, "
          f"hookforge.error = {r.data.tags['hookforge.error'][:80]!r}")

    # 4. The server stopped after the first epoch and started again.
    outage = os.path.join(work, "outage")
    p = subprocess.Popen([binary, config, "--output", outage, "--set", uri,
                          "--set", "hooks.mlflow.params.experiment=outage",
                          "--set", "trainer.params.epochs=12"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_epochs(outage, 1, p)
    server.stop()
    wait_for_epochs(outage, 3, p)
    time.sleep(2)
    server.start()
    _, err = p.communicate(timeout=600)
    if p.returncode != 0:
        fail(f"outage run exited {p.returncode}:\n{err}")
    if "trying again until it answers" not in err or "answers again" not in err:
        fail(f"outage run did not say the server went away and came back:\n{err}")
    r = only_run(client, "outage")
    _, compared = check_metrics(client, r.info.run_id, outage, "outage run")
    if r.info.status != "FINISHED":
        fail(f"outage run: status {r.info.status}")
    print(f"server stopped after epoch 1, started after epoch 3: all {compared} values arrived, "
          "FINISHED; the run said:\n  " +
          "\n  ".join(line for line in err.splitlines() if "MLflowLogger" in line))

    # 5. The server down from the start.
    server.stop()
    down = [config, "--output", os.path.join(work, "down"), "--set", uri,
            "--set", "hooks.mlflow.params.queue_capacity=5",
            "--set", "hooks.mlflow.params.finish_timeout_seconds=1",
            "--set", "trainer.params.epochs=1"]
    p = run(binary, down)
    for said in ("training goes on", "the queue for", "dropped when the queue was full",
                 "did not reach"):
        if said not in p.stderr:
            fail(f"server down: the run did not say '{said}':\n{p.stderr}")
    p = run(binary, down[:2] + [os.path.join(work, "down-strict")] + down[3:] + ["--strict"],
            expect=None)
    if p.returncode == 0 or "strict" not in p.stderr or os.path.exists(
            os.path.join(work, "down-strict", "metrics.jsonl")):
        fail(f"server down, --strict: exit {p.returncode}\n{p.stderr}")
    print("server down: the run warned, trained, and said what it dropped:\n  " +
          "\n  ".join(line for line in run(binary, down[:2] + [os.path.join(work, "down2")] +
                                           down[3:]).stderr.splitlines()
                      if "MLflowLogger" in line) +
          f"\n  --strict: exit {p.returncode}")

    # 6. HTTPS, a bearer token and basic auth, through a proxy that checks them.
    server.start()
    token = "Bearer hookforge-token"
    basic = "Basic " + base64.b64encode(b"ada:lovelace").decode()
    proxy = AuthProxy(work, server.uri, {token, basic})
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    base_env.update(MLFLOW_TRACKING_URI=proxy.uri, MLFLOW_TRACKING_SERVER_CERT_PATH=proxy.cert)
    one_epoch = ["--set", "trainer.params.epochs=1",
                 "--set", "hooks.mlflow.params.finish_timeout_seconds=2"]
    for name, extra in (("token", {"MLFLOW_TRACKING_TOKEN": "hookforge-token"}),
                        ("basic", {"MLFLOW_TRACKING_USERNAME": "ada",
                                   "MLFLOW_TRACKING_PASSWORD": "lovelace"})):
        proxy.connections.clear()
        p = run(binary, [config, "--output", os.path.join(work, "https-" + name),
                         "--set", "hooks.mlflow.params.experiment=https-" + name] + one_epoch,
                env=dict(base_env, **extra))
        r = only_run(client, "https-" + name)
        if r.info.status != "FINISHED" or "val/psnr" not in r.data.metrics or "MLflowLogger" in p.stderr:
            fail(f"https with {name}: status {r.info.status}, metrics {sorted(r.data.metrics)}\n"
                 f"{p.stderr}")
        if len(proxy.connections) != 1:
            fail(f"https with {name}: {len(proxy.connections)} connections, expected one kept alive")
    if proxy.refused:
        fail(f"the proxy refused {proxy.refused} requests with the right credentials")
    p = run(binary, [config, "--output", os.path.join(work, "https-wrong")] + one_epoch,
            env=dict(base_env, MLFLOW_TRACKING_TOKEN="wrong"))
    if "HTTP 401" not in p.stderr or "training goes on without MLflow" not in p.stderr:
        fail(f"a wrong token: the run did not say so:\n{p.stderr}")
    untrusted = dict(base_env)
    del untrusted["MLFLOW_TRACKING_SERVER_CERT_PATH"]
    q = run(binary, [config, "--output", os.path.join(work, "https-untrusted")] + one_epoch,
            env=untrusted)
    if "certificate" not in q.stderr:
        fail(f"an unknown CA: the run did not say so:\n{q.stderr}")
    print("https: a bearer token and basic auth each through one kept-alive connection, "
          "FINISHED; a wrong token and an unknown CA said:\n  " +
          "\n  ".join(line for line in (p.stderr + q.stderr).splitlines() if "MLflowLogger" in line))
    server.stop()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
