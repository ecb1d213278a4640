"""The agreement report over every importer fixture (benchmarks/agreement_report.py)."""

from __future__ import annotations

from assembler.analysis.bill import Fidelity
from assembler.analysis.bill.agreement_summary import Agreement, agreement_lines


def test_the_report_over_every_fixture() -> None:
    from benchmarks.agreement_report import FIXTURES, fixture_files, measure, report

    files = fixture_files(FIXTURES)
    assert len(files) == 16  # every main file; subagent and compaction files ride with theirs
    total = Fidelity()
    for m in measure(FIXTURES):
        assert m.fidelity is not None, m.refused
        total = total + m.fidelity
    assert (total.agreement.steps, total.agreement.agree) == (71, 70)
    # the one disagreement: a prefix warmed outside the log; the other unexplained partial
    # is gpt-5.5's 512-token step (codex_traffic/rollout-codex-0125.jsonl, both sides agree)
    assert total.agreement.reasons["unexplained"] == 2
    lines = report(FIXTURES, "hand-made fixtures")
    print("\n".join(lines))  # the figure the README states
    assert any(line.startswith("class agreement 29/29 (100.0%)") for line in lines)


def test_agreements_add_up() -> None:
    a = Agreement(steps=2, agree=1, same_block=1, read_errors=(0, 4))
    b = Agreement(steps=1, agree=1, same_block=1, read_errors=(2,))
    both = a + b
    assert (both.steps, both.agree, both.read_errors) == (3, 2, (0, 4, 2))
    assert both.error_at(0.5) == 2 and both.error_at(0.9) == 4
    assert agreement_lines(Agreement()) == []
    assert agreement_lines(both)[0].startswith("simulated vs measured: 2 of 3 steps agree (66.7%")
