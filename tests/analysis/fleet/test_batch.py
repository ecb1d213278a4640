"""``analyze`` over a folder or a glob: parallel workers, aggregate report, bad files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.fleet.batch import (
    BatchReport,
    analyze_batch,
    batch_json,
    distribution,
    histogram,
    human_batch,
    is_batch_target,
    session_paths,
)
from assembler.cli.main import main
from assembler.sessions.generator import generate_session, write_session
from assembler.sessions.loader import load_session

N_SESSIONS = 200


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("sessions")
    for i in range(N_SESSIONS):
        suffix = ".yaml" if i % 2 else ".jsonl"
        write_session(generate_session(8 + i % 8, seed=i), d / f"s{i:03d}{suffix}")
    (d / "broken.yaml").write_text("format: context-session/1\nsession: [unclosed\n", "utf-8")
    (d / "notes.txt").write_text("not a session", "utf-8")  # ignored: not a session suffix
    return d


@pytest.fixture(scope="module")
def report(folder: Path) -> BatchReport:
    return analyze_batch(session_paths(str(folder)), workers=2)


def test_the_folder_is_analysed_on_two_worker_processes(report: BatchReport) -> None:
    assert len(report.sessions) == N_SESSIONS
    assert report.workers == 2
    assert len(report.pids) > 1  # both workers did some of the sessions
    assert report.steps == sum(8 + i % 8 for i in range(N_SESSIONS))


def test_a_bad_file_is_reported_not_fatal(report: BatchReport) -> None:
    assert [Path(f.path).name for f in report.failures] == ["broken.yaml"]
    message = report.failures[0].message
    assert "\n" not in message and "broken.yaml" in message
    assert "broken.yaml" in human_batch(report)


def test_aggregate_equals_the_sum_of_single_analyses(folder: Path, report: BatchReport) -> None:
    picked = [folder / "s000.jsonl", folder / "s017.yaml", folder / "s123.yaml"]
    small = analyze_batch(picked, workers=2)
    singles = [analyze(load_session(p)) for p in picked]
    t = small.totals()
    for key in ("tokens", "read", "write", "uncached", "usd", "usd_without_cache"):
        assert t[key] == pytest.approx(sum(a.totals[key] for a in singles), rel=1e-12), key
    assert t["steps"] == sum(len(a.steps) for a in singles)
    expected = Counter(s.miss.component for a in singles for s in a.steps if s.miss is not None)
    assert {c: n for c, n, _ in small.breakers()} == dict(expected)
    lost: Counter[str] = Counter()
    for a in singles:
        for step in a.steps:
            if step.miss is not None:
                lost[step.miss.component] += step.miss.tokens_lost
    assert {c: t for c, _, t in small.breakers()} == dict(lost)
    # the same sessions inside the 200-session run carry the same numbers
    by_path = {s.path: s for s in report.sessions}
    for p, a in zip(picked, singles, strict=True):
        summary = by_path[str(p)]
        assert (summary.tokens, summary.read, summary.write, summary.uncached) == (
            a.totals["tokens"],
            a.totals["read"],
            a.totals["write"],
            a.totals["uncached"],
        )
        assert summary.hit_ratio == pytest.approx(a.totals["hit_ratio"])
    whole = report.totals()
    assert whole["tokens"] == sum(s.tokens for s in report.sessions)
    assert whole["usd"] < whole["usd_without_cache"]


def test_distribution_and_histogram() -> None:
    values = [i / 10 for i in range(11)]  # 0.0, 0.1, …, 1.0
    d = distribution(values)
    assert d == pytest.approx({"min": 0.0, "p10": 0.1, "median": 0.5, "p90": 0.9, "max": 1.0})
    assert distribution([0.4]) == {"min": 0.4, "p10": 0.4, "median": 0.4, "p90": 0.4, "max": 0.4}
    h = histogram([0.0, 0.05, 0.55, 1.0, 0.999])
    assert [n for _, n in h] == [2, 0, 0, 0, 0, 1, 0, 0, 0, 2]
    assert h[0][0].strip() == "0–10%" and h[-1][0] == " 90–100%"


def test_report_json(report: BatchReport) -> None:
    out = batch_json(report)
    assert out["sessions"] == N_SESSIONS and out["failed"] == 1
    assert sum(b["sessions"] for b in out["histogram"]) == N_SESSIONS
    hr = out["hit_ratio"]
    assert hr["min"] <= hr["p10"] <= hr["median"] <= hr["p90"] <= hr["max"]
    assert out["cost"]["usd"] < out["cost"]["usd_without_cache"]
    assert out["breakers"][0]["misses"] >= out["breakers"][-1]["misses"]
    assert out["failures"][0]["path"].endswith("broken.yaml")


def test_targets(folder: Path) -> None:
    assert is_batch_target(str(folder))
    assert is_batch_target(str(folder / "s00*.yaml"))
    assert not is_batch_target(str(folder / "s001.yaml"))
    assert len(session_paths(str(folder / "s00*.yaml"))) == 5
    assert len(session_paths(str(folder))) == N_SESSIONS + 1  # notes.txt left out
    with pytest.raises(ValueError, match="no session file"):
        session_paths(str(folder / "nothing-*.yaml"))


def test_cli_glob_json_and_errors(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["analyze", str(folder / "s01*"), "--json", "--workers", "2"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["sessions"] == 10 and out["workers"] == 2 and out["failed"] == 0

    code = main(["analyze", str(folder / "s00*.yaml"), "--workers", "1"])
    text = capsys.readouterr().out
    assert code == 0 and "5 sessions analysed, 0 failed" in text and "hit ratio per session" in text

    assert main(["analyze", str(folder), "--csv"]) == 2
    assert "--csv applies to one session" in capsys.readouterr().err
    assert main(["analyze", str(folder / "none-*.yaml")]) == 2
    assert "no session file" in capsys.readouterr().err
    assert main(["analyze", str(folder / "s00*.yaml"), "--workers", "0"]) == 2


def test_a_worker_drops_its_token_memo_past_the_limit(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assembler.analysis.fleet import batch
    from assembler.cache import tokenizers as tokens

    tokens.counter.cache_clear()
    first = batch.summarise(str(folder / "s001.yaml"), batch.Options())
    assert isinstance(first, batch.SessionSummary)
    kept = tokens.counter("o200k_base")
    assert len(kept) > 0  # under the limit: kept for the next session
    monkeypatch.setattr(batch, "MEMO_LIMIT", len(kept))
    batch.summarise(str(folder / "s003.yaml"), batch.Options())  # grows past the limit
    assert tokens.counter("o200k_base") is not kept
    assert len(tokens.counter("o200k_base")) == 0
    failed = batch.summarise(str(folder / "broken.yaml"), batch.Options())
    assert isinstance(failed, batch.Failure) and "broken.yaml" in failed.message
