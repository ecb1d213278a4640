"""The agreement report over every importer fixture (benchmarks/agreement_report.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from assembler.analysis.bill.agreement_summary import Agreement, agreement_lines

ROOT = Path(__file__).resolve().parents[3]


def test_the_report_over_every_fixture() -> None:
    spec = importlib.util.spec_from_file_location(
        "agreement_report", ROOT / "benchmarks" / "agreement_report.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines, total = module.report()
    print("\n".join(lines))  # the figure the README states
    files = module.fixture_files(module.FIXTURES)
    assert len(files) == 14  # every main file; subagent and compaction files ride with theirs
    assert (total.steps, total.agree) == (62, 61)
    # the one disagreement: a prefix warmed outside the log
    assert total.reasons["unexplained"] == 1
    assert lines[-3].startswith("simulated vs measured: 61 of 62 steps agree (98.4%")


def test_agreements_add_up() -> None:
    a = Agreement(steps=2, agree=1, same_block=1, read_errors=(0, 4))
    b = Agreement(steps=1, agree=1, same_block=1, read_errors=(2,))
    both = a + b
    assert (both.steps, both.agree, both.read_errors) == (3, 2, (0, 4, 2))
    assert both.error_at(0.5) == 2 and both.error_at(0.9) == 4
    assert agreement_lines(Agreement()) == []
    assert agreement_lines(both)[0].startswith("simulated vs measured: 2 of 3 steps agree (66.7%")
