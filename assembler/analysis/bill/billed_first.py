"""The bill first, the simulation beside it: what a report says first about a session
the provider billed.

The bill is what the session cost; the simulation is a model of it. A report gives first the
billed cost of the steps that carry usage, then the simulated cost of those same steps with
its difference from the bill and, where that difference is above :data:`SHOWN_ABOVE` (5 %),
the step where the simulation first read differently from the bill, how much of the
difference lies at the steps that read differently and how much in the sizes, and the tokens
read, written and uncached on both sides. A projection (per day, per month) starts from the
bill: the billed steps at their billed cost, any step without usage at its simulated cost.
The bill comes first where it covers most of the session (:attr:`BillFirst.comes_first`: an
imported session; the last request of a Codex rollout may carry no usage); a session written
by hand with usage on a step or two keeps the simulated cost first and the bill beside it.

**Read differently.** A step reads differently from the bill when its simulated class
(full hit / partial / miss) is not its billed class: ``MeasuredComparison.agree`` is false,
the steps the agreement summary counts as not agreeing (the classes and their tolerance,
``max(128, 0.5 %)`` of what the previous request left cached, are in
:mod:`assembler.analysis.bill.measured`). A read of the same class that ends a few tokens
elsewhere is not one: the simulator counts with a stand-in tokenizer, so sizes differ a
little at every step; the sizes are compared on their own line, input tokens simulated
against billed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assembler.analysis.bill.billing import billed_cost, billed_without_cache
from assembler.analysis.bill.measured import MeasuredComparison, compare_measured
from assembler.analysis.bill.measured_causes import Side, measured_side, simulated_side
from assembler.analysis.engine import SessionAnalysis

SHOWN_ABOVE = 0.05  # |simulated / billed - 1| above which the first divergent step is named


@dataclass(frozen=True)
class BillFirst:
    """A billed session's cost, bill first (USD; tokens where named)."""

    billed: float  # the steps with usage, as billed
    simulated: float  # the same steps, as simulated
    billed_without_cache: float  # the same steps' billed tokens, nothing cached
    billed_steps: int
    steps: int
    rest_simulated: float  # the steps without usage, simulated
    rest_without_cache: float
    sizes_billed: Side  # read / written / uncached tokens of the billed steps, as billed
    sizes_simulated: Side  # and as simulated
    divergence: MeasuredComparison | None  # the first step that reads differently
    diverging_steps: int = 0  # steps that read differently from the bill
    diverging_difference: float = 0.0  # simulated − billed USD over those steps

    @property
    def difference(self) -> float | None:
        """simulated / billed − 1; None for a bill of nothing."""
        return self.simulated / self.billed - 1 if self.billed else None

    @property
    def comes_first(self) -> bool:
        """The bill covers most of the session (more than half its steps): an imported
        session, whose cost the bill is, not a written one carrying a sample of usage."""
        return self.billed_steps * 2 > self.steps

    @property
    def far(self) -> bool:
        """The simulation is further than :data:`SHOWN_ABOVE` from the bill."""
        d = self.difference
        return d is not None and abs(d) > SHOWN_ABOVE

    @property
    def per_session(self) -> float:
        """What a projection multiplies: the bill, and the simulation where there is none."""
        return self.billed + self.rest_simulated

    @property
    def per_session_without_cache(self) -> float:
        return self.billed_without_cache + self.rest_without_cache


def first_divergence(checks: Sequence[MeasuredComparison]) -> MeasuredComparison | None:
    """The first step (in step order) whose simulated class is not its billed class."""
    return next((c for c in checks if not c.agree), None)


def bill_first(
    a: SessionAnalysis, checks: Sequence[MeasuredComparison] | None = None
) -> BillFirst | None:
    """``a``'s bill and simulation side by side; None when no step carries usage.

    ``a`` must be an analysis at the session's recorded provider and model (at another
    there is no bill); ``checks``: ``compare_measured(a)`` when the caller has it.
    Raises ``PricingError`` when a step's usage has no known price."""
    checks = compare_measured(a) if checks is None else checks
    differs = {c.step for c in checks if not c.agree}
    billed = simulated = plain = rest = rest_plain = apart = 0.0
    count = 0
    sizes_billed = sizes_simulated = Side(0, 0, 0)
    for s in a.steps:
        usd = billed_cost(s)
        if usd is None or s.measured is None:
            rest += s.usd
            rest_plain += s.usd_without_cache
            continue
        billed += usd
        simulated += s.usd
        plain += billed_without_cache(s) or 0.0
        count += 1
        sizes_billed = _plus(sizes_billed, measured_side(s.measured))
        sizes_simulated = _plus(sizes_simulated, simulated_side(s))
        if s.step in differs:
            apart += s.usd - usd
    if not count:
        return None
    return BillFirst(
        billed,
        simulated,
        plain,
        count,
        len(a.steps),
        rest,
        rest_plain,
        sizes_billed,
        sizes_simulated,
        first_divergence(checks),
        len(differs),
        apart,
    )


def _plus(a: Side, b: Side) -> Side:
    return Side(a.read + b.read, a.write + b.write, a.uncached + b.uncached)


def divergence_clause(c: MeasuredComparison) -> str:
    """What the step's comparison says after its number: ``simulated full hit, measured
    partial — block changed: …``."""
    return c.sentence.removeprefix(f"step {c.step}: ")


def _steps(n: int) -> str:
    return f"{n:,} step{'' if n == 1 else 's'}"


def _usd(x: float) -> str:
    """A signed difference in dollars; a difference that rounds to nothing has no sign."""
    cents = round(x, 4)
    if not cents:
        return "$0.0000"
    return f"-${-cents:,.4f}" if cents < 0 else f"+${cents:,.4f}"


def split_sentence(figures: BillFirst) -> str:
    """Where the difference from the bill lies: the steps that read differently, the rest."""
    whole = figures.simulated - figures.billed
    if not figures.diverging_steps:
        return (
            "no step read differently from the bill (full hit, partial and miss agree at every"
            f" billed step): the whole difference, {_usd(whole)}, is in the sizes"
        )
    agreeing = figures.billed_steps - figures.diverging_steps
    if not agreeing:
        n = figures.diverging_steps
        which = "the one billed step" if n == 1 else f"all {n:,} billed steps"
        return (
            f"{which} read differently from the bill: the whole difference, {_usd(whole)}, is there"
        )
    return (
        f"of the difference, {_usd(whole)}: {_usd(figures.diverging_difference)} at the"
        f" {_steps(figures.diverging_steps)} that read differently,"
        f" {_usd(whole - figures.diverging_difference)} in the sizes of the {agreeing:,}"
        " that read as billed"
    )


def sizes_sentence(figures: BillFirst) -> str:
    """Tokens read, written and uncached, simulated against billed."""
    sim, paid = figures.sizes_simulated, figures.sizes_billed
    parts = []
    for name, s, b in (
        ("read", sim.read, paid.read),
        ("written", sim.write, paid.write),
        ("uncached", sim.uncached, paid.uncached),
    ):
        off = f" ({s / b - 1:+.1%})" if b else ""
        parts.append(f"{name} {s:,} / {b:,}{off}")
    return "tokens simulated / billed: " + ", ".join(parts)


def bill_first_lines(figures: BillFirst) -> list[str]:
    """The text report's cost lines for a billed session, the bill first."""
    partial = figures.billed_steps < figures.steps
    of = f", of {figures.steps:,}" if partial else ""
    d = figures.difference
    off = "" if d is None else f", {d:+.1%} from the bill"
    same = "step" if figures.billed_steps == 1 else "steps"
    lines = [
        f"billed: ${figures.billed:.4f} for the {_steps(figures.billed_steps)} with usage{of}",
        f"simulated: ${figures.simulated:.4f} for the same {same}{off}",
    ]
    if figures.far:
        c = figures.divergence
        if c is not None:
            lines.append(
                f"  first read differently from the bill at step {c.step}: {divergence_clause(c)}"
            )
        lines.append(f"  {split_sentence(figures)}")
        lines.append(f"  {sizes_sentence(figures)}")
    return lines
