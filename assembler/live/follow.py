"""Following a proxy's capture log as it grows: each new whole line read once, as a row of
predicted against billed, and the running billed / simulated / no-cache cost.

A line's request and response are read by the request-log importer's ``read_exchange``, as
``analyze`` reads the log later; the proxy's own fields (session, prediction, bill) beside
them. Each row keeps where its line is in the file, so a request's step can be read back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assembler.errors import UsageError
from assembler.sessions.importers.request_logs.exchange import (
    Exchange,
    ExchangeError,
    read_exchange,
)

_READ_AT_MOST = 256 * 1024 * 1024  # a poll reads this much of a fast-growing log at most


@dataclass(frozen=True)
class LiveRow:
    time: str
    session: str
    model: str
    request: str  # the path
    status: int | None
    prediction: str  # ready, late, failed, none; "" for a path not predicted
    predicted_read: int | None
    predicted_write: int | None
    predicted_uncached: int | None
    billed_read: int | None
    billed_write: int | None
    billed_uncached: int | None
    agrees: bool | None  # predicted read and write equal the bill's
    miss: str
    billed_usd: float | None
    simulated_usd: float | None
    no_cache_usd: float | None
    error: str
    scale: float | None = None  # the size factor the prediction counted at
    at: tuple[int, int] = (0, 0)  # the line's offset and length in the log
    started: str = ""  # the request's timestamp as written: the session's order


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usd(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _time(value: Any) -> str:
    return value[11:19] if isinstance(value, str) else ""


def live_row(line: dict[str, Any], exchange: Exchange, at: tuple[int, int] = (0, 0)) -> LiveRow:
    """The row of a capture line whose exchange ``read_exchange`` read."""
    p, b = _map(line.get("prediction")), _map(line.get("billed"))
    url = exchange.url or ""
    path = "/" + url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0] if url else ""
    ready = p.get("status") == "ready"
    read, write = _int(p.get("read")), _int(p.get("write"))
    billed = (_int(b.get("read")), _int(b.get("write")))
    agrees = (read, write) == billed if ready and billed[0] is not None else None
    return LiveRow(
        time=_time(exchange.timestamp),
        session=_text(line.get("session")),
        model=_text(p.get("model")) or _text(exchange.request.get("model")),
        request=path,
        status=exchange.status,
        prediction=_text(p.get("status")),
        predicted_read=read if ready else None,
        predicted_write=write if ready else None,
        predicted_uncached=_int(p.get("uncached")) if ready else None,
        billed_read=billed[0],
        billed_write=billed[1],
        billed_uncached=_int(b.get("uncached")),
        agrees=agrees,
        miss=_text(p.get("miss")) or _text(p.get("why")),
        billed_usd=_usd(b.get("usd")),
        simulated_usd=_usd(b.get("simulated_usd")),
        no_cache_usd=_usd(b.get("no_cache_usd")),
        error=_text(line.get("error")),
        scale=_usd(p.get("scale")),
        at=at,
        started=str(exchange.timestamp),
    )


@dataclass
class LogFollower:
    """Reads ``path`` from where it stopped; a line still being written waits for its end."""

    path: Path
    offset: int = 0
    rows: list[LiveRow] = field(default_factory=list)
    skipped: int = 0  # lines that are not capture lines of a model call
    first_skipped: str = ""  # why the first of them was

    def poll(self) -> list[LiveRow]:
        """The rows of the lines written since the last poll (also kept in ``rows``)."""
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                chunk = f.read(_READ_AT_MOST)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise UsageError(f"{self.path}: cannot read the proxy log ({exc.strerror})") from None
        end = chunk.rfind(b"\n") + 1
        new = []
        start = 0
        while start < end:
            stop = chunk.index(b"\n", start) + 1
            row = self._row(chunk[start:stop], (self.offset + start, stop - start))
            if row is not None:
                new.append(row)
            start = stop
        self.offset += end
        self.rows.extend(new)
        return new

    def _row(self, raw: bytes, at: tuple[int, int]) -> LiveRow | None:
        if not raw.strip():
            return None
        try:
            line = json.loads(raw)
            if not isinstance(line, dict):
                raise ExchangeError("expected a captured exchange as a JSON object")
            return live_row(line, read_exchange(line), at)
        except (ValueError, RecursionError) as exc:  # ExchangeError is a ValueError
            self.skipped += 1
            if not self.first_skipped:
                why = str(exc) if isinstance(exc, ExchangeError) else "not JSON"
                self.first_skipped = f"byte {at[0]:,}: {why[:200]}"
            return None

    def lines(self, rows: list[LiveRow]) -> list[dict[str, Any]]:
        """The capture lines of ``rows``, read back from the log."""
        out = []
        with self.path.open("rb") as f:
            for row in rows:
                f.seek(row.at[0])
                out.append(json.loads(f.read(row.at[1])))
        return out


@dataclass(frozen=True)
class LiveTotals:
    requests: int
    predicted: int
    agreed: int
    compared: int
    billed_usd: float
    simulated_usd: float
    no_cache_usd: float


def live_totals(rows: list[LiveRow]) -> LiveTotals:
    compared = [r for r in rows if r.agrees is not None]
    return LiveTotals(
        requests=len(rows),
        predicted=sum(r.prediction == "ready" for r in rows),
        agreed=sum(bool(r.agrees) for r in compared),
        compared=len(compared),
        billed_usd=sum(r.billed_usd or 0.0 for r in rows),
        simulated_usd=sum(r.simulated_usd or 0.0 for r in rows),
        no_cache_usd=sum(r.no_cache_usd or 0.0 for r in rows),
    )
