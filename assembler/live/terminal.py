"""What the proxy says on its terminal: one line per exchange, a summary on exit."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"


def _usd(value: Any) -> str:
    return f"${value:.4f}" if isinstance(value, float | int) else "$?"


def exchange_line(
    at: datetime,
    method: str,
    path: str,
    status: int | None,
    prediction: dict[str, Any] | None,
    billed: dict[str, Any] | None,
    error: str | None,
) -> str:
    """``21:50:03 claude-sonnet-4-5 200 predicted r 4,486 w 106 | billed r 4,486 w 106
    $0.0027 call_tree (io released)`` — or the method and path of a request not predicted."""
    clock = at.astimezone().strftime("%H:%M:%S")
    code = str(status) if status is not None else "---"
    p = prediction or {}
    parts = [clock]
    if p.get("status") == "ready":
        parts += [str(p.get("model")), code, f"predicted r {_n(p['read'])} w {_n(p['write'])}"]
    else:
        parts += [f"{method} {path}", code]
        if p.get("status") in ("late", "failed"):
            parts.append(f"prediction {p['status']}: {p.get('why', '')}".rstrip(": "))
    if billed:
        parts.append(f"| billed r {_n(billed.get('read'))} w {_n(billed.get('write'))}")
        if "usd" in billed:
            parts.append(_usd(billed["usd"]))
    if p.get("miss"):
        parts.append(str(p["miss"]))
    if error:
        parts.append(f"({error})")
    return " ".join(parts)


@dataclass
class Summary:
    """Totals over the run, printed on exit."""

    exchanges: int = 0
    errors: int = 0
    predicted: int = 0
    late: int = 0
    agreed: int = 0
    compared: int = 0
    billed_usd: float = 0.0
    simulated_usd: float = 0.0
    no_cache_usd: float = 0.0
    sessions: set[str] = field(default_factory=set)

    def add(self, status: int | None, prediction: dict[str, Any], billed: dict[str, Any]) -> None:
        self.exchanges += 1
        self.errors += status is None or status >= 400
        if prediction.get("status") == "late":
            self.late += 1
        if prediction.get("status") != "ready":
            return
        self.predicted += 1
        self.sessions.add(str(prediction.get("session")))
        if "read" in billed:
            self.compared += 1
            same = (prediction["read"], prediction["write"]) == (billed["read"], billed["write"])
            self.agreed += same
        self.billed_usd += float(billed.get("usd") or 0.0)
        self.simulated_usd += float(billed.get("simulated_usd") or 0.0)
        self.no_cache_usd += float(billed.get("no_cache_usd") or 0.0)

    def text(self) -> str:
        return (
            f"{self.exchanges} exchanges ({self.errors} failed), {len(self.sessions)} sessions; "
            f"{self.predicted} predicted ({self.late} late), {self.agreed} of {self.compared} "
            f"matched the bill's read and write; billed {_usd(self.billed_usd)}, simulated "
            f"{_usd(self.simulated_usd)}, without caching {_usd(self.no_cache_usd)}"
        )
