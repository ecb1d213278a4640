"""An analysis as flat rows, for tables, CSV and pandas."""

from __future__ import annotations

from typing import Any

from assembler.analysis.engine import SessionAnalysis
from assembler.design.context import format_time

ROW_COLUMNS = (
    "step",
    "label",
    "function",
    "timestamp",
    "model",
    "total",
    "tools",
    "L0",
    "L1",
    "L2",
    "read",
    "write",
    "uncached",
    "hit_ratio",
    "usd",
    "usd_without_cache",
    "miss_component",
    "miss_layer",
    "miss_reason",
    "tokens_lost",
    "measured_read",
    "measured_write",
    "measured_uncached",
    "measured_agree",
)


def analysis_rows(a: SessionAnalysis) -> list[dict[str, Any]]:
    """One flat row per step (columns :data:`ROW_COLUMNS`), for CSV and tables.

    The ``measured_*`` columns are empty for a step without measured usage;
    ``measured_agree`` is ``yes`` or ``no`` (simulated and measured in the same class).
    """
    from assembler.analysis.bill import compare_measured  # imports this module

    agree = {c.step: c.agree for c in compare_measured(a)}
    rows = []
    for s in a.steps:
        m = s.miss
        u = s.measured
        ok = agree.get(s.step)
        rows.append(
            {
                "step": s.step,
                "label": s.label or "",
                "function": s.function,
                "timestamp": format_time(s.timestamp),
                "model": s.model,
                "total": s.tokens["total"],
                "tools": s.tokens["tools"],
                "L0": s.tokens["L0"],
                "L1": s.tokens["L1"],
                "L2": s.tokens["L2"],
                "read": s.read,
                "write": s.write,
                "uncached": s.uncached,
                "hit_ratio": round(s.hit_ratio, 4),
                "usd": round(s.usd, 6),
                "usd_without_cache": round(s.usd_without_cache, 6),
                "miss_component": m.component if m else "",
                "miss_layer": m.layer if m else "",
                "miss_reason": m.reason if m else "",
                "tokens_lost": m.tokens_lost if m else 0,
                "measured_read": u.cache_read if u is not None else "",
                "measured_write": u.cache_write if u is not None else "",
                "measured_uncached": u.input if u is not None else "",
                "measured_agree": "" if ok is None else ("yes" if ok else "no"),
            }
        )
    return rows
