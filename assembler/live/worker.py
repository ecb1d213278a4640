"""The prediction worker: one process beside the proxy, so an analysis never holds up the
bytes the proxy is forwarding. Tasks run in the order they are sent; the worker keeps every
session's state between them.

The proxy talks to it over a socket pair that its event loop reads and writes itself: a
task is one non-blocking write, a result is read when the loop polls anyway. No thread of
the proxy's takes part, so none competes with the forward for the interpreter's lock (the
standard process pool's feeder and manager threads cost the forward about 0.5 ms at the
median; docs/live.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import pickle
import socket
import struct
from collections.abc import Callable
from datetime import datetime
from typing import Any

_HEAD = struct.Struct("!IQ")  # payload length, task id
_READY = 0  # the id of the frame that says the worker is warm
PREDICT, SETTLE = "predict", "settle"


def _failed(kind: str, why: str) -> dict[str, Any]:
    """What a task that could not run answers: a failed prediction, an unpriced bill."""
    return {"status": "failed", "why": why} if kind == PREDICT else {}


def _frame(task: int, value: Any) -> bytes:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEAD.pack(len(payload), task) + payload


def _read_exactly(sock: socket.socket, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _serve(sock: socket.socket) -> None:
    """The worker process: a blocking loop over tasks until the proxy closes its end."""
    from assembler.live.prediction import Predictor

    # the forward comes first: on a busy machine the analyses wait, not the bytes (at
    # nice 10 the worker still cost the forward about 1 ms at the median; docs/live.md)
    os.nice(19)
    predictor = Predictor()
    predictor.warm()
    sock.sendall(_frame(_READY, None))
    while True:
        head = _read_exactly(sock, _HEAD.size)
        if head is None:
            return
        size, task = _HEAD.unpack(head)
        payload = _read_exactly(sock, size)
        if payload is None:
            return
        kind, args = pickle.loads(payload)
        try:
            result = predictor.predict(*args) if kind == PREDICT else predictor.settle(*args)
        except Exception as exc:  # a bug costs one prediction, never the worker
            result = _failed(kind, f"{type(exc).__name__}: {exc}"[:300])
        sock.sendall(_frame(task, result))


def _run(sock: socket.socket, parent_end: socket.socket) -> None:
    parent_end.close()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, KeyboardInterrupt):
        _serve(sock)  # until the proxy goes away


class _Results(asyncio.Protocol):
    """Reads the worker's result frames and settles the futures waiting for them."""

    def __init__(self, on_frame: Callable[[int, Any], None], on_lost: Callable[[], None]) -> None:
        self._buffer = bytearray()
        self._on_frame = on_frame
        self._on_lost = on_lost

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        while len(buffer) >= _HEAD.size:
            size, task = _HEAD.unpack_from(buffer)
            end = _HEAD.size + size
            if len(buffer) < end:
                return
            value = pickle.loads(buffer[_HEAD.size : end])
            del buffer[:end]
            self._on_frame(task, value)

    def connection_lost(self, exc: Exception | None) -> None:
        self._on_lost()


class PredictionWorker:
    """Started before the proxy serves (a forked process inherits no running threads);
    connected to the proxy's event loop by :meth:`connect`. If it dies, predictions are
    recorded as failed and forwarding goes on."""

    def __init__(self) -> None:
        # loaded here, before the fork, so the worker starts with the analysis imported
        import assembler.live.prediction  # noqa: F401

        self._sock, child = socket.socketpair()
        context = multiprocessing.get_context("fork")
        self._process = context.Process(
            target=_run, args=(child, self._sock), name="prediction-worker", daemon=True
        )
        self._process.start()
        child.close()
        self._transport: asyncio.Transport | None = None
        self._waiting: dict[int, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self._next = _READY
        self._stopped: str | None = None
        self.ready: asyncio.Future[None] | None = None

    async def connect(self) -> None:
        """Read and write the worker's socket from the running event loop."""
        loop = asyncio.get_running_loop()
        self.ready = loop.create_future()
        self._sock.setblocking(False)
        transport, _ = await loop.create_unix_connection(
            lambda: _Results(self._settled, self._lost), sock=self._sock
        )
        self._transport = transport

    def _settled(self, task: int, value: Any) -> None:
        if task == _READY:
            if self.ready is not None and not self.ready.done():
                self.ready.set_result(None)
            return
        _, future = self._waiting.pop(task, ("", None))
        if future is not None and not future.done():
            future.set_result(value)

    def _lost(self) -> None:
        self._stopped = self._stopped or "it exited"
        why = f"prediction worker stopped ({self._stopped})"
        for kind, future in self._waiting.values():
            if not future.done():
                future.set_result(_failed(kind, why))
        self._waiting.clear()

    def _send(self, kind: str, args: tuple[Any, ...]) -> asyncio.Future[dict[str, Any]]:
        if self._transport is None or self._transport.is_closing() or self._stopped:
            raise RuntimeError(self._stopped or "not connected")
        self._next += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = (kind, future)
        self._transport.write(_frame(self._next, (kind, args)))
        return future

    def predict(
        self, exchange: int, api: str, url: str, at: datetime, body: bytes, headers: dict[str, str]
    ) -> asyncio.Future[dict[str, Any]]:
        return self._send(PREDICT, (exchange, api, url, at, body, headers))

    def settle(
        self, exchange: int, status: int | None, response: dict[str, Any]
    ) -> asyncio.Future[dict[str, Any]]:
        return self._send(SETTLE, (exchange, status, response))

    def close(self) -> None:
        self._stopped = "the proxy stopped"
        if self._transport is not None:
            with contextlib.suppress(RuntimeError):  # its loop may have closed already
                self._transport.close()
        self._sock.close()  # the worker reads the end of its tasks and exits
        self._process.join(5)
        if self._process.is_alive():
            self._process.terminate()
