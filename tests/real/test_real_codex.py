"""Codex rollouts of the real-traffic corpus against their bill (see corpus.py)."""

from __future__ import annotations

import pytest

from assembler.sessions.importers import ImporterError
from tests.real.corpus import REAL_MARKS, measured, total

pytestmark = REAL_MARKS


def test_codex_rollouts_fall_in_the_billed_hit_ratio_bin() -> None:
    f = total("codex")
    assert f.agreement.steps >= 280
    assert f.same_bin / f.agreement.steps >= 0.80
    assert f.breaks["unnamed"] <= 7


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
