"""The recorded real traffic (``../shared/real-traffic``), measured once per source.

Each figure is measured per source by ``benchmarks/agreement_report.py`` and held by the
tests beside this module at fixed thresholds: a change that makes the corpus worse fails,
however realistic the hand-made fixture that motivated it. Where the corpus is absent (a
user's clone) the tests skip with one line; in CI it is always there.
"""

from __future__ import annotations

from functools import cache

import pytest

from assembler.analysis.bill import Fidelity
from benchmarks.agreement_report import REAL, Measured, measure

REAL_MARKS = [
    pytest.mark.real,
    pytest.mark.skipif(not REAL.is_dir(), reason=f"no real-traffic corpus at {REAL}"),
]


@cache
def measured(source: str) -> tuple[Measured, ...]:
    return tuple(measure(REAL / source))


def total(source: str) -> Fidelity:
    out = Fidelity()
    for m in measured(source):
        if m.fidelity is not None:
            out = out + m.fidelity
    return out
