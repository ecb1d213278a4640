"""How well the simulator agrees with the bill, per session and over many: class agreement
(full hit / partial / miss), the read error in units of the provider's read granularity,
whether the reads ended in the same block, and the count per reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from assembler.analysis.bill.measured import REASONS, MeasuredComparison

CLASSES = ("full hit", "partial", "miss")


@dataclass(frozen=True)
class Agreement:
    """The summary of a set of measured comparisons."""

    steps: int = 0
    agree: int = 0
    same_block: int = 0  # the two reads ended in the same block
    classes: Counter[tuple[str, str]] = field(default_factory=Counter)  # (simulated, measured)
    read_errors: tuple[int, ...] = ()  # per step, in units of the provider's granularity
    reasons: Counter[str] = field(default_factory=Counter)

    @property
    def share(self) -> float:
        return self.agree / self.steps if self.steps else 1.0

    def error_at(self, q: float) -> int:
        """The ``q`` quantile of the read error (nearest rank)."""
        if not self.read_errors:
            return 0
        ordered = sorted(self.read_errors)
        return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]

    def __add__(self, other: Agreement) -> Agreement:
        return Agreement(
            self.steps + other.steps,
            self.agree + other.agree,
            self.same_block + other.same_block,
            self.classes + other.classes,
            self.read_errors + other.read_errors,
            self.reasons + other.reasons,
        )


def agreement(comparisons: Iterable[MeasuredComparison]) -> Agreement:
    cs = list(comparisons)
    return Agreement(
        steps=len(cs),
        agree=sum(c.agree for c in cs),
        same_block=sum(c.structure_agrees for c in cs),
        classes=Counter((c.simulated_class, c.measured_class) for c in cs),
        read_errors=tuple(c.read_error for c in cs),
        reasons=Counter(c.reason for c in cs if c.reason is not None),
    )


def agreement_lines(a: Agreement) -> list[str]:
    """The summary as text: the share, the classes, the read error, the reasons."""
    if not a.steps:
        return []
    per_class = []
    for cls in CLASSES:
        measured = sum(n for (_, m), n in a.classes.items() if m == cls)
        if measured:
            per_class.append(f"{cls} {a.classes[(cls, cls)]}/{measured}")
    reasons = ", ".join(f"{r} {a.reasons[r]}" for r in REASONS if a.reasons[r])
    return [
        f"simulated vs measured: {a.agree} of {a.steps} steps agree ({a.share:.1%};"
        f" by measured class: {', '.join(per_class)})",
        f"  reads ending in the same block: {a.same_block} of {a.steps};"
        f" read error in units of the provider's granularity: median {a.error_at(0.5):,},"
        f" 90th percentile {a.error_at(0.9):,}, max {max(a.read_errors, default=0):,}",
        f"  reasons: {reasons or 'none'}",
    ]
