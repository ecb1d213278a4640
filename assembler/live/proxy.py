"""The recording proxy: forwards each request to the configured upstream byte for byte,
streams the response back as it arrives, and records the exchange with its prediction."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector, web

from assembler.limits import one_line
from assembler.live.capture import CaptureLog, Exchange
from assembler.live.redaction import redacted_headers, redacted_url
from assembler.live.routes import COUNT_TOKENS, MESSAGES, PREDICTED, RouteError, Upstreams, api_of
from assembler.live.sessions import SESSION_HEADERS
from assembler.live.streams import ResponseWatcher
from assembler.live.terminal import Summary, exchange_line
from assembler.live.worker import PredictionWorker
from assembler.sessions.importers.request_logs.requests_log import measured

# hop-by-hop headers, and those the proxy sets itself for the next hop
_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
}


@dataclass(frozen=True)
class ProxyConfig:
    log: Path
    host: str = "127.0.0.1"
    port: int = 8787
    upstreams: Upstreams = field(default_factory=Upstreams)
    predict: bool = True
    read_timeout: float = 600.0  # seconds the upstream may stay silent
    connect_timeout: float = 10.0
    prediction_wait: float = 2.0  # after a response ends, how long its line waits for one
    max_request_bytes: int = 256 * 1024 * 1024


def _error_body(api: str | None, message: str) -> bytes:
    """A proxy-side failure in the shape the client's SDK reads as the provider's error."""
    if api in (MESSAGES, COUNT_TOKENS):
        body: dict[str, Any] = {"type": "error", "error": {"type": "api_error", "message": message}}
    else:
        body = {"error": {"message": message, "type": "proxy_error", "code": None}}
    return json.dumps(body).encode()


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)


class Proxy:
    def __init__(
        self, config: ProxyConfig, out: TextIO | None = None, worker: PredictionWorker | None = None
    ) -> None:
        self.config = config
        self.out = out if out is not None else sys.stdout
        self.worker = worker
        self.log = CaptureLog(config.log)
        self.summary = Summary()
        self._client: ClientSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._next_id = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.config.max_request_bytes)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        app.on_startup.append(self._open)
        app.on_cleanup.append(self._close)
        return app

    async def _open(self, _app: web.Application) -> None:
        timeout = ClientTimeout(
            total=None, sock_connect=self.config.connect_timeout, sock_read=self.config.read_timeout
        )
        self._client = ClientSession(
            connector=TCPConnector(limit=0),
            timeout=timeout,
            auto_decompress=False,  # the bytes go back as they came
            skip_auto_headers=("User-Agent", "Accept-Encoding"),
        )
        if self.worker is not None:
            began = time.perf_counter()
            await self.worker.connect()
            assert self.worker.ready is not None
            self.worker.ready.add_done_callback(
                lambda _f: print(
                    f"predictions ready ({time.perf_counter() - began:.1f} s)",
                    file=self.out,
                    flush=True,
                )
            )

    async def _close(self, _app: web.Application) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.close()
        self.log.close()
        print(f"summary: {self.summary.text()}", file=self.out, flush=True)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        received = datetime.now(UTC)
        api = api_of(request.path)
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            target = self.config.upstreams.target(request.raw_path, headers)
        except RouteError as exc:
            return web.Response(status=400, body=_error_body(api, str(exc)))
        body = await request.read()
        exchange = Exchange(
            received=received,
            method=request.method,
            url=redacted_url(target),
            request_headers=redacted_headers(request.headers.items()),
            request_body=body,
        )
        self._next_id += 1
        exchange_id = self._next_id  # others arrive while this one is forwarded
        prediction = self._predict(exchange_id, api, target, received, body, headers)
        try:
            response = await self._forward(request, target, body, api, exchange, started)
        except Exception as exc:  # a bug must cost one exchange, never the proxy
            exchange.error = one_line(f"proxy error: {type(exc).__name__}: {exc}", 300)
            print(f"error: {exchange.error}", file=sys.stderr, flush=True)
            response = web.Response(status=502, body=_error_body(api, exchange.error))
        # the bill goes to the worker before the loop reads the client's next request, so a
        # conversation's next prediction is counted at the factor this answer brings
        response_summary = (
            _response_summary(exchange)
            if exchange.streaming or exchange.size <= _INLINE_SUMMARY
            else await asyncio.to_thread(_response_summary, exchange)
        )
        settled = self._settle(exchange_id, exchange, prediction, response_summary)
        task = asyncio.create_task(
            self._finish(api, exchange, prediction, response_summary, settled)
        )
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return response

    def _settle(
        self,
        exchange_id: int,
        exchange: Exchange,
        prediction: asyncio.Future[dict[str, Any]] | None,
        response: dict[str, Any] | None,
    ) -> asyncio.Future[dict[str, Any]] | None:
        """The response told to the worker (even when its prediction comes late)."""
        if prediction is None or self.worker is None:
            return None
        try:
            return self.worker.settle(exchange_id, exchange.status, response or {})
        except RuntimeError:
            return None

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        exc = None if task.cancelled() else task.exception()
        if exc is not None:  # a full disk, say: said once per exchange, forwarding goes on
            detail = one_line(f"{type(exc).__name__}: {exc}", 300)
            print(f"error: could not record an exchange ({detail})", file=sys.stderr, flush=True)

    def _predict(
        self,
        exchange: int,
        api: str | None,
        target: str,
        at: datetime,
        body: bytes,
        headers: dict[str, str],
    ) -> asyncio.Future[dict[str, Any]] | None:
        if self.worker is None or api not in PREDICTED:
            return None
        hints = {k: headers[k] for k in SESSION_HEADERS if k in headers}
        try:
            return self.worker.predict(exchange, api, redacted_url(target), at, body, hints)
        except RuntimeError as exc:  # the worker is gone: forwarding goes on
            failed: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            failed.set_result({"status": "failed", "why": f"prediction worker stopped ({exc})"})
            return failed

    async def _forward(
        self,
        request: web.Request,
        target: str,
        body: bytes,
        api: str | None,
        exchange: Exchange,
        started: float,
    ) -> web.StreamResponse:
        assert self._client is not None
        out_headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        # asked uncompressed so the log can read it; the bytes still pass unchanged
        out_headers["Accept-Encoding"] = "identity"
        resp: web.StreamResponse | None = None
        timing: dict[str, Any] = {}
        exchange.extra["timing"] = timing
        try:
            async with self._client.request(
                request.method, target, headers=out_headers, data=body, allow_redirects=False
            ) as up:
                exchange.status = up.status
                exchange.response_at = datetime.now(UTC)
                exchange.response_headers = redacted_headers(up.headers.items())
                exchange.streaming = up.content_type == "text/event-stream"
                watcher = exchange.watcher = ResponseWatcher(api, exchange.streaming)
                resp = web.StreamResponse(status=up.status, reason=up.reason)
                for name, value in up.headers.items():
                    if name.lower() not in _HOP:
                        resp.headers.add(name, value)
                if up.content_length is not None:
                    resp.content_length = up.content_length
                await resp.prepare(request)
                async for chunk in up.content.iter_any():
                    if "first_byte_ms" not in timing:
                        timing["first_byte_ms"] = _ms(started)
                    exchange.keep(chunk)
                    watcher.feed(chunk)
                    try:
                        await resp.write(chunk)
                    except ConnectionError:
                        exchange.error = f"the client hung up after {exchange.size:,} bytes"
                        break
                else:
                    await resp.write_eof()
        except (ClientError, TimeoutError) as exc:
            what = _upstream_failure(exc, self.config.read_timeout)
            exchange.error = what
            if resp is None or not resp.prepared:
                message = f"proxy: {what} ({redacted_url(target)})"
                error = _error_body(api, message)
                exchange.status, exchange.response_at = 502, datetime.now(UTC)
                exchange.response_headers = {"Content-Type": "application/json"}
                exchange.keep(error)
                timing["end_ms"] = _ms(started)
                return web.Response(status=502, body=error, content_type="application/json")
            if request.transport is not None:  # headers sent: end the stream visibly broken
                request.transport.close()
        timing["end_ms"] = _ms(started)
        assert resp is not None
        return resp

    async def _finish(
        self,
        api: str | None,
        exchange: Exchange,
        prediction: asyncio.Future[dict[str, Any]] | None,
        response: dict[str, Any] | None,
        settled: asyncio.Future[dict[str, Any]] | None,
    ) -> None:
        billed: dict[str, Any] = {}
        predicted: dict[str, Any] = {}
        if api in PREDICTED and response is not None:
            billed = dict(measured(api, response) or {})
            billed = {_BILLED.get(k, k): v for k, v in billed.items()}
        if prediction is not None:
            predicted, priced = await self._prediction(prediction, settled)
            billed.update(priced if billed else {})
            exchange.extra["session"] = predicted.get("session")
            exchange.extra["prediction"] = predicted
        if billed:
            exchange.extra["billed"] = billed
        if exchange.error:
            exchange.extra["error"] = exchange.error
        await asyncio.to_thread(self.log.append, exchange)
        self.summary.add(exchange.status, predicted, billed)
        line = exchange_line(
            exchange.received,
            exchange.method,
            exchange.url.split("?", 1)[0].split("/", 3)[-1],
            exchange.status,
            predicted or None,
            billed or None,
            exchange.error,
        )
        print(line, file=self.out, flush=True)

    async def _prediction(
        self,
        prediction: asyncio.Future[dict[str, Any]],
        settled: asyncio.Future[dict[str, Any]] | None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The prediction if ready in time, and the bill priced beside it."""
        wait = self.config.prediction_wait
        try:
            predicted = await asyncio.wait_for(asyncio.shield(prediction), wait)
        except TimeoutError:
            predicted = {"status": "late", "why": f"not ready {wait:g} s after the response ended"}
        if settled is None or predicted.get("status") != "ready":
            return predicted, {}
        try:
            return predicted, await asyncio.wait_for(asyncio.shield(settled), wait)
        except TimeoutError:
            return predicted, {}


_INLINE_SUMMARY = 256 * 1024  # a JSON response larger than this is parsed off the loop
_BILLED = {"cache_read": "read", "cache_write": "write", "cache_write_1h": "write_1h"}
_BILLED["input"] = "uncached"


def _response_summary(exchange: Exchange) -> dict[str, Any] | None:
    """The response as the request log reads it: the JSON body, or a stream's usage."""
    if exchange.streaming and exchange.watcher is not None:
        return exchange.watcher.summary()
    raw = exchange.response_body()
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _upstream_failure(exc: BaseException, read_timeout: float) -> str:
    from aiohttp import ClientConnectorError, ServerTimeoutError

    if isinstance(exc, ClientConnectorError):
        return f"the upstream refused or could not be reached: {exc.os_error or exc}"
    if isinstance(exc, ServerTimeoutError | TimeoutError):
        return f"the upstream timed out ({read_timeout:g} s without a byte)"
    return f"the upstream connection failed: {type(exc).__name__}: {exc}"
