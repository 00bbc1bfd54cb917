"""A real Dask cluster on 127.0.0.1 for the executor's tests and bench: a `dask scheduler` and worker processes,
started here as processes of their own and stopped by PID. The workers run in a folder of their own with their own
HOME (and SKILLMAKE_WORKER_DIR), so what they read of a project can only come through the store."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class DaskCluster:
    url: str  # dask://127.0.0.1:PORT, what --executor takes
    scheduler_pid: int
    worker_pids: list[int]
    home: Path  # the workers' HOME (and cwd)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list, repr=False)

    def descendants(self) -> list[tuple[int, str]]:
        """(pid, command line) of every live process below the workers: jobs and whatever their trials started."""
        table: dict[int, list[int]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2:].split()
            if fields[0] != b"Z":
                table.setdefault(int(fields[1]), []).append(int(name))
        out = []
        todo = [c for w in self.worker_pids for c in table.get(w, [])]
        while todo:
            pid = todo.pop()
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            except OSError:
                continue
            out.append((pid, cmd))
            todo.extend(table.get(pid, []))
        return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bin(name: str) -> str:
    return os.path.join(os.path.dirname(sys.executable), name)


@contextlib.contextmanager
def dask_cluster(workers: int = 2, *, nthreads: int = 4, env: dict[str, str] | None = None) -> Iterator[DaskCluster]:
    """A scheduler and `workers` worker processes (each with `nthreads` threads), all on 127.0.0.1."""
    home = Path(tempfile.mkdtemp(prefix="skillmake-dask-"))
    port = _free_port()
    base = {k: v for k, v in os.environ.items() if not k.startswith("SKILLMAKE_")}
    base.update(env or {})
    base.update(HOME=str(home), SKILLMAKE_WORKER_DIR=str(home / "worker"), DASK_DISTRIBUTED__WORKER__DAEMON="False",
                PYTHONPATH=os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[1]),
                                                       base.get("PYTHONPATH", "")) if p))
    procs: list[subprocess.Popen[bytes]] = []
    log = open(home / "cluster.log", "wb")  # noqa: SIM115 - closed below
    try:
        procs.append(subprocess.Popen([_bin("dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                       "--no-dashboard"], cwd=home, env=base, stdout=log, stderr=log,
                                      start_new_session=True))
        for _ in range(workers):
            procs.append(subprocess.Popen([_bin("dask"), "worker", f"tcp://127.0.0.1:{port}", "--nthreads",
                                           str(nthreads), "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                           "--local-directory", str(home / "dask")],
                                          cwd=home, env=base, stdout=log, stderr=log, start_new_session=True))
        from distributed import Client

        with Client(f"tcp://127.0.0.1:{port}", timeout=120, set_as_default=False) as client:  # a loaded machine
            client.wait_for_workers(workers, timeout=120)
        yield DaskCluster(url=f"dask://127.0.0.1:{port}", scheduler_pid=procs[0].pid,
                          worker_pids=[p.pid for p in procs[1:]], home=home, procs=procs)
    finally:
        for proc in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
        subprocess.run(["rm", "-rf", str(home)], check=False)
