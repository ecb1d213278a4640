"""The prediction worker: one process beside the proxy, so an analysis never holds up the
bytes the proxy is forwarding. Tasks run in the order they are sent; the worker keeps every
session's state between them."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from datetime import datetime
from typing import Any

_predictor: Any = None  # the worker process's Predictor


def _start() -> None:
    global _predictor
    from assembler.live.prediction import Predictor

    # the forward comes first: on a busy machine the analyses wait, not the bytes
    os.nice(10)
    _predictor = Predictor()
    _predictor.warm()


def _ready() -> bool:
    return _predictor is not None


def _predict(
    exchange: int, api: str, url: str, at: datetime, body: bytes, headers: dict[str, str]
) -> dict[str, Any]:
    result: dict[str, Any] = _predictor.predict(exchange, api, url, at, body, headers)
    return result


def _settle(exchange: int, status: int | None, response: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = _predictor.settle(exchange, status, response)
    return result


class PredictionWorker:
    """Started before the proxy serves (a forked process inherits no running threads);
    if it dies, predictions are recorded as failed and forwarding goes on."""

    def __init__(self) -> None:
        # loaded here, before the fork, so the worker starts with the analysis imported
        import assembler.live.prediction  # noqa: F401

        context = multiprocessing.get_context("fork")
        self._pool = ProcessPoolExecutor(1, mp_context=context, initializer=_start)
        # forks now, before the server starts any thread; warms up while the proxy serves
        self.ready = self._pool.submit(_ready)

    def predict(
        self, exchange: int, api: str, url: str, at: datetime, body: bytes, headers: dict[str, str]
    ) -> asyncio.Future[dict[str, Any]]:
        return self._wrap(self._pool.submit(_predict, exchange, api, url, at, body, headers))

    def settle(
        self, exchange: int, status: int | None, response: dict[str, Any]
    ) -> asyncio.Future[dict[str, Any]]:
        return self._wrap(self._pool.submit(_settle, exchange, status, response))

    @staticmethod
    def _wrap(future: Future[dict[str, Any]]) -> asyncio.Future[dict[str, Any]]:
        return asyncio.wrap_future(future)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
