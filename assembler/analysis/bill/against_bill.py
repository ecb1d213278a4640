"""How faithful a simulated session is to its bill, in the figures real traffic is judged by:
class agreement, false alarms (billed a full hit, simulated a partial or a miss), the
share of steps whose simulated hit ratio falls in the billed one's bin, billed against
simulated cost, and breaks of prefix continuity per cause.

**Prefix continuity.** A client resends what it sent before plus what came back: in one
conversation, request k+1 begins with request k's blocks. Where it does not, the break is
counted under the label the importer gave the later request (``compaction``,
``task-notification``, ``branch``, ``model-switch``, ``tools-changed``, …) or, without one,
``unnamed``: an importer that rebuilds the history wrongly shows up there. A conversation
is told by its first block (an importer keeps each thread's prefix its own).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from assembler.analysis.bill.agreement_summary import Agreement, agreement
from assembler.analysis.bill.billing import session_costs
from assembler.analysis.bill.measured import FULL_HIT, compare_measured
from assembler.analysis.engine import SessionAnalysis
from assembler.sessions.model import LLMCall, RecordedBlock, Session

UNNAMED = "unnamed"
_NUMBERED = re.compile(r"-\d+$")  # the count a repeated label carries
# hit-ratio bins: miss below 5 %, full hit from 90 %, partial between
MISS_BELOW, FULL_FROM = 0.05, 0.90


def hit_bin(read: int, total: int) -> str:
    ratio = read / total if total else 0.0
    return "miss" if ratio < MISS_BELOW else "full" if ratio >= FULL_FROM else "partial"


@dataclass(frozen=True)
class Fidelity:
    """One session's (or, added up, many sessions') figures against the bill."""

    agreement: Agreement = field(default_factory=Agreement)
    false_alarms: int = 0
    same_bin: int = 0  # steps whose simulated hit ratio is in the billed one's bin
    billed: float = 0.0  # USD over the steps that carry a bill
    simulated: float = 0.0  # USD the simulation gives those same steps
    breaks: Counter[str] = field(default_factory=Counter)  # prefix-continuity breaks by cause
    sessions: int = 0
    worst_cost_error: float = 0.0  # the largest |simulated / billed - 1| of one session

    @property
    def cost_error(self) -> float:
        return self.simulated / self.billed - 1 if self.billed else 0.0

    def __add__(self, other: Fidelity) -> Fidelity:
        return Fidelity(
            self.agreement + other.agreement,
            self.false_alarms + other.false_alarms,
            self.same_bin + other.same_bin,
            self.billed + other.billed,
            self.simulated + other.simulated,
            self.breaks + other.breaks,
            self.sessions + other.sessions,
            max(self.worst_cost_error, other.worst_cost_error),
        )


def _unmarked(b: RecordedBlock) -> tuple[str, str, str, int | None]:
    return (b.section, b.role, b.text, b.tokens)


def continuity_breaks(session: Session) -> Counter[str]:
    """Per cause, the requests that do not begin with their conversation's previous one."""
    last: dict[tuple[str, str, str, int | None], tuple[tuple[str, str, str, int | None], ...]]
    last = {}
    out: Counter[str] = Counter()
    for e in session.events:
        if not isinstance(e, LLMCall) or e.request is None or not len(e.request):
            continue
        blocks = tuple(_unmarked(b) for b in e.request)
        thread = blocks[0]
        before = last.get(thread)
        if before is not None and blocks[: len(before)] != before:
            out[_NUMBERED.sub("", e.label or UNNAMED)] += 1  # "compaction-2" counts as compaction
        last[thread] = blocks
    return out


def fidelity(session: Session, analysis: SessionAnalysis) -> Fidelity:
    """``analysis`` (of ``session`` at its recorded provider and model) against its bill."""
    checks = compare_measured(analysis)
    by_step = {s.step: s for s in analysis.steps}
    alarms = sum(c.measured_class == FULL_HIT and c.simulated_class != FULL_HIT for c in checks)
    same = 0
    for c in checks:
        step = by_step[c.step]
        measured = step.measured
        assert measured is not None
        billed_total = measured.input + measured.cache_read + measured.cache_write
        same += hit_bin(c.simulated.read, c.simulated.total) == hit_bin(
            measured.cache_read, billed_total
        )
    costs = session_costs(analysis)
    billed = costs.billed or 0.0
    error = abs(costs.simulated_billed_steps / billed - 1) if billed else 0.0
    return Fidelity(
        agreement(checks),
        alarms,
        same,
        billed,
        costs.simulated_billed_steps,
        continuity_breaks(session),
        1,
        error,
    )


def fidelity_lines(f: Fidelity) -> list[str]:
    """The figures as text, one line each."""
    a = f.agreement
    steps = a.steps or 1
    breaks = ", ".join(f"{cause} {n}" for cause, n in sorted(f.breaks.items())) or "none"
    return [
        f"class agreement {a.agree}/{a.steps} ({a.share:.1%}); false alarms {f.false_alarms};"
        f" same hit-ratio bin {f.same_bin}/{a.steps} ({f.same_bin / steps:.1%})",
        f"  cost: billed ${f.billed:,.2f}, simulated ${f.simulated:,.2f} ({f.cost_error:+.1%});"
        f" worst session {f.worst_cost_error:.1%}",
        f"  prefix-continuity breaks: {breaks}",
    ]
