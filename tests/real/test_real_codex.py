"""Codex rollouts of the real-traffic corpus against their bill (see corpus.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from assembler.sessions.importers import ImporterError
from benchmarks.codex_unpredictable import REAL, classify
from tests.real.corpus import REAL_MARKS, measured, total

pytestmark = REAL_MARKS


def test_codex_rollouts_fall_in_the_billed_hit_ratio_bin() -> None:
    f = total("codex")
    assert f.agreement.steps == 291
    assert f.same_bin >= 253  # 86.9 %: every other step is one the provider routed (below)
    assert total("codex/moonmind").same_bin >= 204
    assert total("codex/codemie-code").same_bin >= 49


def test_every_break_of_prefix_continuity_is_a_named_event() -> None:
    breaks = total("codex").breaks
    assert breaks["unnamed"] == 0
    assert breaks == Counter({"reasoning-dropped": 7})


def _in_another_bin(source: str) -> tuple[float, float]:
    """Billed and simulated USD of the source's steps in another bin than the bill's."""
    billed = simulated = 0.0
    for path in sorted((REAL / source).rglob("*.jsonl")):
        try:
            _, found = classify(path)
        except ImporterError:
            continue
        billed += sum(b for _, _, b, _ in found)
        simulated += sum(s for _, _, _, s in found)
    return billed, simulated


@pytest.mark.parametrize("source", ["codex/moonmind", "codex/codemie-code"])
def test_the_cost_gap_is_the_steps_in_another_bin(source: str) -> None:
    """Without the steps the provider served elsewhere, the simulated cost is within 5 %
    of the bill (moonmind −4.0 %, codemie-code −2.2 %); with them −12.3 % and −53.0 %."""
    f = total(source)
    billed, simulated = _in_another_bin(source)
    assert abs((f.simulated - simulated) / (f.billed - billed) - 1) < 0.05
    assert f.cost_error < 0


def test_each_step_in_another_bin_is_one_the_provider_served_elsewhere() -> None:
    """What the bill alone shows of each disagreement: nothing read, only the part every
    session shares, an older or coarser entry, less of the previous response, or an entry
    kept past its lifetime; none is left unexplained."""
    kinds: Counter[str] = Counter()
    for path in sorted((REAL / "codex").rglob("*.jsonl")):
        try:
            _, found = classify(path)
        except ImporterError:
            continue
        kinds.update(kind for _, kind, _, _ in found)
    assert kinds["other"] == 0
    assert sum(kinds.values()) <= 38
    assert kinds["read nothing"] <= 17


def test_a_rollout_without_usage_is_refused_in_one_line() -> None:
    refused = [m for m in measured("codex") if m.fidelity is None]
    assert len(refused) == 1
    assert refused[0].refused is not None and "\n" not in refused[0].refused
    assert str(refused[0].path) in refused[0].refused


def test_the_refusal_is_an_importer_error() -> None:
    from assembler.analysis.engine import import_file

    (m,) = [m for m in measured("codex") if m.fidelity is None]
    with pytest.raises(ImporterError):
        import_file(m.fmt, m.path)
