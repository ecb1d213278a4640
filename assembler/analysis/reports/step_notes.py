"""What a text report says about single steps beside its table: the warnings the app
shows on a step (a failed component, a request the provider would treat otherwise, a
tier with no price) and the steps priced in a recorded tier or speed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from assembler.analysis.engine import StepAnalysis


def step_ranges(numbers: Iterable[int]) -> str:
    """``1, 3–5, 9``: ascending step numbers, runs of consecutive ones as a range."""
    parts: list[str] = []
    start = end = None
    for n in sorted(set(numbers)):
        if end is not None and n == end + 1:
            end = n
            continue
        if start is not None:
            parts.append(str(start) if start == end else f"{start}–{end}")
        start = end = n
    if start is not None:
        parts.append(str(start) if start == end else f"{start}–{end}")
    return ", ".join(parts)


def _steps(numbers: list[int]) -> str:
    return f"step{'s' if len(numbers) > 1 else ''} {step_ranges(numbers)}"


def _grouped(pairs: Iterable[tuple[int, str]]) -> dict[str, list[int]]:
    """The step numbers of each text, the texts in the order they first appear."""
    groups: dict[str, list[int]] = {}
    for step, text in pairs:
        groups.setdefault(text, []).append(step)
    return groups


def warning_lines(steps: Sequence[StepAnalysis]) -> list[str]:
    """One line per distinct warning, with the steps that raised it (a warning every
    step raises is one line, not one per step)."""
    groups = _grouped((s.step, w) for s in steps for w in s.warnings)
    return [f"warning: {_steps(ns)}: {text}" for text, ns in groups.items()]


def priced_as_lines(steps: Sequence[StepAnalysis]) -> list[str]:
    """The steps billed in a recorded service tier or speed, not at standard rates."""
    groups = _grouped(
        (s.step, ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in s.price_context))
        for s in steps
        if s.price_context
    )
    if not groups:
        return []
    return [
        "priced as recorded: " + "; ".join(f"{_steps(ns)} in {text}" for text, ns in groups.items())
    ]
