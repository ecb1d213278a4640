"""The proxy as a user runs it (``python -m assembler proxy``), in a child process whose
output is collected line by line; and a reader of its capture log for the tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.app_server import ROOT, free_port


@dataclass
class RunningProxy:
    proc: subprocess.Popen[str]
    port: int
    log: Path
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def lines(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        text = self.log.read_text()
        whole = text[: text.rfind("\n") + 1]  # a line still being written is not read yet
        return [json.loads(line) for line in whole.splitlines()]

    def wait_lines(self, n: int, timeout: float = 20) -> list[dict[str, Any]]:
        """The log once it holds ``n`` lines (each is written as its exchange ends)."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.lines()
            if len(got) >= n or time.monotonic() > deadline:
                return got
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _collect(stream: Any, into: list[str]) -> None:
    for line in stream:
        into.append(line.rstrip("\n"))


@contextmanager
def running_proxy(
    upstream: str, log: Path, *extra: str, ready: str = "predictions ready"
) -> Iterator[RunningProxy]:
    """The proxy on a free port, forwarding to ``upstream``; yielded once ``ready`` is said."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assembler",
            "proxy",
            "--port",
            str(port),
            "--upstream",
            upstream,
            "--log",
            str(log),
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    running = RunningProxy(proc, port, log)
    for stream, into in ((proc.stdout, running.out), (proc.stderr, running.err)):
        threading.Thread(target=_collect, args=(stream, into), daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        # listening, and (unless told otherwise) predicting
        while not all(any(w in line for line in running.out) for w in ("proxy on", ready)):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the proxy did not start: {running.err[-3:]}")
            time.sleep(0.05)
        yield running
    finally:
        running.stop()
        time.sleep(0.1)  # the reader threads take the last lines
