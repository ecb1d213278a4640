"""Every hostile input: exit 2 and one line naming the file (line and field where there is
one), within a time and memory budget measured here; or, where the input is valid, success."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from build import CASES, Case, argv, build

from tests.hostile.runner import PEAK_BYTES, SECONDS, run_cli


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    build(tmp)
    return tmp


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input(case: Case, hostile: Path) -> None:
    args = argv(case, hostile)
    run = run_cli(args, hostile / f"{case.name}.peak")
    assert 0 <= run.cpu_seconds < SECONDS, f"{case.name}: {run.cpu_seconds:.1f} s of CPU"
    assert 0 < run.peak_bytes < PEAK_BYTES, f"{case.name} peaked at {run.peak_bytes:,} bytes"
    assert run.code == case.exit, run.stderr
    err = run.stderr.strip()
    assert "internal error" not in err and "Traceback" not in err
    if case.exit == 2:
        assert len(err.splitlines()) == 1, err
        assert len(err) < 800, len(err)
        if case.names_file:
            assert str(hostile / case.name) in err or "/dev/" in err, err
    for text in case.expect:
        assert text in err, err


def test_deep_call_stack_keeps_its_tree(hostile: Path) -> None:
    """A 1,000-deep stack renders every level, no component failure."""
    run = run_cli(argv(next(c for c in CASES if c.name == "deep-calls"), hostile), hostile / "p")
    assert run.code == 0 and "failed" not in run.stderr, run.stderr
    assert "function: f999" in run.stdout and "function: f0" in run.stdout


def test_deeper_than_the_limit_is_refused(tmp_path: Path) -> None:
    from build import deep_calls

    (tmp_path / "d.jsonl").write_text(deep_calls(1001), "utf-8")
    run = run_cli(["steps", str(tmp_path / "d.jsonl")], tmp_path / "p")
    assert run.code == 2 and "nest deeper than 1,000" in run.stderr


def test_imports_read_back(hostile: Path) -> None:
    """U+2028 and half an emoji in a transcript, and a 300-character model, survive import
    and load back (the command loads what it wrote before it reports success)."""
    for name in ("claude-u2028", "requests-long-model", "claude-lone-surrogate"):
        case = next(c for c in CASES if c.name == name)
        run = run_cli(argv(case, hostile), hostile / "p")
        assert run.code == 0, run.stderr
        out = hostile / name / "o.jsonl"
        lines = out.read_text("utf-8").split("\n")
        for line in filter(None, lines):
            event = json.loads(line)
            if event.get("type") == "change":
                assert len(event["model"]) <= 200
    text = (hostile / "claude-u2028" / "o.jsonl").read_text("utf-8")
    assert "\u2028" in text


def test_glob_named_file_wins(hostile: Path) -> None:
    run = run_cli(["analyze", str(hostile / "glob-named-file" / "sess[1].yaml")], hostile / "p")
    assert run.code == 0, run.stderr
    assert "hostile" in run.stdout


@pytest.mark.slow
def test_batch_reports_a_file_over_its_budget_under_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One file that never finishes is stopped at its budget and listed as failed; the
    others run. The pool's workers are forked, so they inherit the stalling loader."""
    import time

    from build import session_json

    from assembler.analysis.fleet.batch import Options, analyze_batch
    from assembler.sessions import loader

    real = loader.load_session

    def stalls(path: str | Path, **kwargs: Any) -> Any:
        while "slow" in str(path):
            time.sleep(1)
        return real(path, **kwargs)

    from assembler.analysis.app import inputs

    monkeypatch.setattr(loader, "load_session", stalls)
    monkeypatch.setattr(inputs, "load_session", stalls)  # a batch opens any input through it
    for name in ("ok.json", "slow.json"):
        (tmp_path / name).write_text(session_json(), "utf-8")
    # 5 s: the small session opens and analyses in well under a second; the stalled one
    # holds a worker for the whole budget.
    report = analyze_batch(sorted(tmp_path.iterdir()), Options(file_seconds=5), workers=1)
    assert [s.path for s in report.sessions] == [str(tmp_path / "ok.json")], report.failures
    assert [f.path for f in report.failures] == [str(tmp_path / "slow.json")]
    assert "per-file budget of 5 s" in report.failures[0].message
