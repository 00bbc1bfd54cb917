"""`explain` reads the local store only: with a remote configured it sends no request, whatever it is asked (a
store that lost its records, `--failed`, `--shard`), so it costs no round trip per trial. A run does ask."""

from __future__ import annotations

import contextlib
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.remote_server import S3Server

from .inprocess import InProcess
from .test_remote import clone


@contextlib.contextmanager
def counting_listener() -> Iterator[tuple[int, list[int]]]:
    """A port on 127.0.0.1 that accepts and drops every connection, counting them."""
    accepted: list[int] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            accepted.append(1)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join()
        listener.close()


def test_explain_sends_the_remote_no_request(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    here = InProcess(capfd)  # explain is no doit run: in this process, as a fresh one would run it
    with counting_listener() as (port, accepted):
        env = {**S3Server(endpoint=f"http://127.0.0.1:{port}", pid=0).env(), "AWS_MAX_ATTEMPTS": "1",
               "SKILLMAKE_REMOTE": "s3://team/evals"}
        p = clone(tmp_path, "p")
        p.replace("t.eval.yaml", "  - {id: warm, prompt: say bye, rubric: Is the farewell warm?}\n", "")
        run = p.run(env=env)  # a run asks the remote for what it lacks (here: nothing answers)
        assert run.code == 0, run.out + run.err
        assert accepted
        # The records are lost locally (the views still name them): every cell is stale again, and `--failed`
        # must find which cells failed — from the local store alone.
        shutil.rmtree(p.root / ".skillmake" / "actions")
        accepted.clear()
        for args in (["explain"], ["explain", "--failed"], ["explain", "--shard", "1/2", "--format", "json"]):
            run = here.run(p, *args, env=env, check_views=False)
            assert run.code == 0, run.out + run.err
            assert accepted == [], args
        assert "would run 4 trials" in here.run(p, "explain", env=env, check_views=False).out
