"""Following a proxy's capture log as it grows: each new whole line read once, as a row of
predicted against billed, and the running billed / simulated / no-cache cost."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assembler.errors import UsageError

_READ_AT_MOST = 256 * 1024 * 1024  # a poll reads this much of a fast-growing log at most


@dataclass(frozen=True)
class LiveRow:
    time: str
    session: str
    model: str
    request: str  # method and path
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


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usd(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def live_row(line: dict[str, Any]) -> LiveRow:
    request, response = _map(line.get("request")), _map(line.get("response"))
    p, b = _map(line.get("prediction")), _map(line.get("billed"))
    body = _map(request.get("body"))
    url = _text(request.get("url"))
    path = "/" + url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0] if url else ""
    ready = p.get("status") == "ready"
    read, write = _int(p.get("read")), _int(p.get("write"))
    billed = (_int(b.get("read")), _int(b.get("write")))
    agrees = (read, write) == billed if ready and billed[0] is not None else None
    return LiveRow(
        time=_text(request.get("timestamp"))[11:19],
        session=_text(line.get("session")),
        model=_text(p.get("model")) or _text(body.get("model")),
        request=f"{_text(request.get('method'))} {path}".strip(),
        status=_int(response.get("status_code")),
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
    )


@dataclass
class LogFollower:
    """Reads ``path`` from where it stopped; a line still being written waits for its end."""

    path: Path
    offset: int = 0
    rows: list[LiveRow] = field(default_factory=list)
    skipped: int = 0  # lines that are not capture lines

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
        for raw in chunk[:end].splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                line = None
            if isinstance(line, dict) and isinstance(line.get("request"), dict):
                new.append(live_row(line))
            elif raw.strip():
                self.skipped += 1
        self.offset += end
        self.rows.extend(new)
        return new


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
