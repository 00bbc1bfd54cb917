"""Dask distributed or Ray for `--executor`: start-up, memory, latency, cancellation and errors, measured here.

Run each engine from an interpreter that has it (a scratch venv each keeps them apart):

    python bench/cluster_engines.py --dask /tmp/venv-dask/bin/python --ray /tmp/venv-ray/bin/python

prints one table, both engines side by side. Each side starts a local cluster of 2 worker processes as real
processes on 127.0.0.1 (dask: a scheduler and 2 `dask worker`; ray: `ray start --head --num-cpus 2`), then:
start-up (until 2 tasks ran on 2 worker processes), the resident memory of every process the cluster started,
the round trip of one no-op task (median of 50), 200 no-ops at once, what a cancel does to a running task that
waits on a child process (`sleep 60`), and what comes back from a task that raises.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def _pids() -> set[int]:
    return {int(n) for n in os.listdir("/proc") if n.isdigit()}


def _cluster_pids(before: set[int]) -> set[int]:
    """The processes the cluster started: new since `before` and run from this engine's environment (its python,
    or a binary inside it), so that other work on a shared machine is not counted."""
    mine = {os.getpid()}
    out = set()
    for pid in _pids() - before - mine:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        if sys.prefix in cmd:
            out.add(pid)
    return out


def _rss_mb(pids: set[int]) -> tuple[float, int]:
    total = 0
    alive = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        alive += 1
        except OSError:
            continue
    return total / 1024, alive


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class Boom(Exception):
    pass


def _noop(x: int) -> int:
    return x


def _pid(_: int) -> int:
    time.sleep(0.2)
    return os.getpid()


def _raise(_: int) -> int:
    raise Boom("the trial's infrastructure failed")


def _child(path: str) -> int:
    proc = subprocess.Popen(["sleep", "60"])
    with open(path, "w") as f:
        f.write(str(proc.pid))
    try:
        proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        with open(path + ".interrupted", "w") as f:
            f.write("1")
        raise
    return 0


def _wait_file(path: str, within: float = 20.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                text = f.read().strip()
            if text:
                return int(text)
        except OSError:
            pass
        time.sleep(0.02)
    raise RuntimeError(f"{path} never appeared")


def measure_dask() -> dict[str, object]:
    from distributed import Client

    tmp = tempfile.mkdtemp(prefix="bench-dask-")
    before = _pids()
    t0 = time.monotonic()
    sched_file = os.path.join(tmp, "scheduler.json")
    bindir = os.path.dirname(sys.executable)
    procs = [subprocess.Popen([os.path.join(bindir, "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--no-dashboard", "--scheduler-file", sched_file],
                              env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(__file__))),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    while not os.path.exists(sched_file):
        time.sleep(0.01)
    for _ in range(2):
        procs.append(subprocess.Popen([os.path.join(bindir, "dask"), "worker", "--scheduler-file", sched_file,
                                       "--nthreads", "4", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
                                      env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(__file__))),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
    client = Client(scheduler_file=sched_file)
    client.wait_for_workers(2)
    workers = {client.submit(_pid, i, pure=False, workers=[w]).result()
               for i, w in enumerate(client.scheduler_info()["workers"])}
    startup = time.monotonic() - t0
    time.sleep(1.0)
    mem, nprocs = _rss_mb(_cluster_pids(before))
    rtts = []
    for i in range(50):
        t = time.perf_counter()
        client.submit(_noop, i, pure=False).result()
        rtts.append(time.perf_counter() - t)
    t = time.perf_counter()
    client.gather([client.submit(_noop, i, pure=False) for i in range(200)])
    batch = time.perf_counter() - t
    # cancel a running task that waits on a child process
    marker = os.path.join(tmp, "child")
    fut = client.submit(_child, marker, pure=False)
    child = _wait_file(marker)
    t = time.perf_counter()
    client.cancel(fut, force=True)
    time.sleep(3.0)
    cancel = {"child_alive_3s_after_cancel": _alive(child),
              "task_saw_interrupt": os.path.exists(marker + ".interrupted")}
    # a client that goes away (Ctrl-C ending the submitting process) while its task runs
    marker2 = os.path.join(tmp, "child2")
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path.insert(0, {here!r}); import cluster_engines as m; "
            f"from distributed import Client; c = Client(scheduler_file={sched_file!r}); "
            f"f = c.submit(m._child, {marker2!r}, pure=False); import time; time.sleep(60)")
    driver = subprocess.Popen([sys.executable, "-c", code])
    child2 = _wait_file(marker2)
    driver.send_signal(signal.SIGINT)
    driver.wait(10)
    time.sleep(3.0)
    cancel["child_alive_3s_after_driver_exit"] = _alive(child2)
    # errors
    try:
        client.submit(_raise, 0, pure=False).result()
        error = "no exception"
    except Exception as exc:
        error = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
    for pid in (child, child2):
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    client.close()
    for proc in procs:
        os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    shutil.rmtree(tmp, ignore_errors=True)
    return {"engine": "dask", "startup_s": startup, "rss_mb": mem, "processes": nprocs, "workers": len(workers),
            "rtt_ms": statistics.median(rtts) * 1000, "batch200_s": batch, "cancel": cancel, "error": error}


def measure_ray() -> dict[str, object]:
    import ray

    tmp = tempfile.mkdtemp(prefix="bench-ray-")
    before = _pids()
    t0 = time.monotonic()
    bindir = os.path.dirname(sys.executable)
    port = "46379"
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", PYTHONPATH=os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([os.path.join(bindir, "ray"), "start", "--head", "--node-ip-address", "127.0.0.1", "--port", port,
                    "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats",
                    "--temp-dir", os.path.join(tmp, "ray")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    ray.init(address=f"127.0.0.1:{port}", logging_level="ERROR", log_to_driver=False)
    pid = ray.remote(_pid)
    workers = set(ray.get([pid.remote(i) for i in range(2)]))
    startup = time.monotonic() - t0
    time.sleep(1.0)
    mem, nprocs = _rss_mb(_cluster_pids(before))
    noop = ray.remote(_noop)
    rtts = []
    for i in range(50):
        t = time.perf_counter()
        ray.get(noop.remote(i))
        rtts.append(time.perf_counter() - t)
    t = time.perf_counter()
    ray.get([noop.remote(i) for i in range(200)])
    batch = time.perf_counter() - t
    marker = os.path.join(tmp, "child")
    ref = ray.remote(_child).remote(marker)
    child = _wait_file(marker)
    ray.cancel(ref)  # not force: KeyboardInterrupt in the task
    time.sleep(3.0)
    cancel = {"child_alive_3s_after_cancel": _alive(child),
              "task_saw_interrupt": os.path.exists(marker + ".interrupted")}
    marker2 = os.path.join(tmp, "child2")
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path.insert(0, {here!r}); import cluster_engines as m; "
            f"import ray; ray.init(address='127.0.0.1:{port}', logging_level='ERROR', log_to_driver=False); "
            f"r = ray.remote(m._child).remote({marker2!r}); import time; time.sleep(60)")
    driver = subprocess.Popen([sys.executable, "-c", code], env=env)
    child2 = _wait_file(marker2, within=60)
    driver.send_signal(signal.SIGINT)
    driver.wait(20)
    time.sleep(3.0)
    cancel["child_alive_3s_after_driver_exit"] = _alive(child2)
    try:
        ray.get(ray.remote(_raise).remote(0))
        error = "no exception"
    except Exception as exc:
        error = f"{type(exc).__module__}.{type(exc).__name__}: {str(exc).splitlines()[0]}"
    for pid in (child, child2):
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    ray.shutdown()
    subprocess.run([os.path.join(bindir, "ray"), "stop", "--force"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env)
    shutil.rmtree(tmp, ignore_errors=True)
    return {"engine": "ray", "startup_s": startup, "rss_mb": mem, "processes": nprocs, "workers": len(workers),
            "rtt_ms": statistics.median(rtts) * 1000, "batch200_s": batch, "cancel": cancel, "error": error}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", choices=["dask", "ray"])
    parser.add_argument("--dask", default=sys.executable, help="a python with distributed installed")
    parser.add_argument("--ray", default=sys.executable, help="a python with ray installed")
    args = parser.parse_args()
    if args.engine:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import cluster_engines as me  # tasks pickle by this module's name, importable on the workers

        out = me.measure_dask() if args.engine == "dask" else me.measure_ray()
        print(json.dumps(out))
        return
    rows = {}
    for engine, python in (("dask", args.dask), ("ray", args.ray)):
        done = subprocess.run([python, os.path.abspath(__file__), "--engine", engine], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__)), timeout=600)
        if done.returncode != 0:
            print(f"{engine}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
            continue
        rows[engine] = json.loads(done.stdout.strip().splitlines()[-1])
    d, r = rows.get("dask", {}), rows.get("ray", {})

    def cell(row: dict[str, object], name: str, fmt: str) -> str:
        value = row.get(name)
        return format(value, fmt) if isinstance(value, int | float) else str(value)

    print(f"{'measure':42} {'dask':>22} {'ray':>22}")
    for name, label, fmt in (("startup_s", "start-up, 2 workers (s)", ".2f"),
                             ("rss_mb", "resident memory (MB)", ".0f"), ("processes", "processes started", "d"),
                             ("rtt_ms", "submit→result, one no-op (ms)", ".2f"),
                             ("batch200_s", "200 no-ops at once (s)", ".3f")):
        print(f"{label:42} {cell(d, name, fmt):>22} {cell(r, name, fmt):>22}")
    for name in ("task_saw_interrupt", "child_alive_3s_after_cancel", "child_alive_3s_after_driver_exit"):
        print(f"{name:42} {d.get('cancel', {}).get(name)!s:>22} {r.get('cancel', {}).get(name)!s:>22}")
    print(f"{'exception raised in a task':42}\n  dask: {d.get('error')}\n  ray:  {r.get('error')}")


if __name__ == "__main__":
    main()
