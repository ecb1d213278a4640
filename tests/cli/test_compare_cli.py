"""``analyze`` and ``compare`` on the command line: output shapes and exit codes."""

from __future__ import annotations

import csv
import io
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assembler.cli.main import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
RESEARCH = str(SAMPLES / "research_agent.yaml")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("a test tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_e_situation_first_breaks_the_prefix_and_fails_the_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Token-prefix caching (OpenAI) reads the unchanged head of the call tree under
    # seed; situation-first puts per-call text in front of it, so it never is.
    code, out, _ = run(
        capsys,
        "compare",
        RESEARCH,
        "--base",
        "seed",
        "--head",
        "situation-first",
        "--provider",
        "openai",
        "--model",
        "gpt-5",
        "--json",
    )
    data = json.loads(out)
    assert code == 1
    assert data["breaking_component"] == "situation"
    assert data["thresholds"]["exceeded"] is True
    assert data["hit_ratio_drop_points"] > 2 or data["cost_increase_percent"] > 5
    assert data["head"]["hit_ratio"] < data["base"]["hit_ratio"]
    # the human output names it as well
    code, out, _ = run(
        capsys, "compare", RESEARCH, "--base", "seed", "--head", "situation-first",
        "--provider", "openai", "--model", "gpt-5",
    )  # fmt: skip
    assert code == 1 and "situation" in out and "threshold exceeded" in out


def test_e_session_provider_exits_1_and_names_situation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Under the session's own provider (Anthropic, whole blocks): calls made inside the
    # same function reuse the cached call tree under seed, never under situation-first.
    code, out, _ = run(
        capsys, "compare", RESEARCH, "--base", "seed", "--head", "situation-first", "--json"
    )
    data = json.loads(out)
    assert code == 1
    assert data["breaking_component"] == "situation"
    assert data["hit_ratio_drop_points"] > 2
    assert data["cost_increase_percent"] > 5


def test_compare_a_layout_with_itself_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compare", RESEARCH, "--base", "seed", "--head", "seed", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["first_divergent_step"] is None
    assert data["hit_ratio_drop_points"] == 0 and data["cost_increase_percent"] == 0


def test_thresholds_decide_the_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["compare", RESEARCH, "--base", "seed", "--head", "expose-full"]
    code, out, _ = run(capsys, *args, "--json")
    data = json.loads(out)
    assert code == 1 and data["cost_increase_percent"] > 5
    code, _, _ = run(capsys, *args, "--max-hit-ratio-drop", "100", "--max-cost-increase", "1000")
    assert code == 0


def test_analyze_outputs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "analyze", RESEARCH)
    assert code == 0
    assert "totals:" in out and "misses:" in out and "hit ratio" in out
    assert "approximate" in out  # Claude's tokenizer is not public
    code, out, _ = run(capsys, "analyze", RESEARCH, "--json", "--ttl", "1h")
    data = json.loads(out)
    assert code == 0 and data["ttl"] == "1h" and len(data["steps"]) == 21
    code, out, _ = run(
        capsys, "analyze", RESEARCH, "--csv", "--provider", "openai", "--model", "gpt-5"
    )
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 21
    assert all(int(r["read"]) % 128 == 0 for r in rows)
    assert all(
        int(r["read"]) + int(r["write"]) + int(r["uncached"]) == int(r["total"]) for r in rows
    )


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["analyze", RESEARCH, "--layout", "no-such-layout"], "no-such-layout"),
        (["analyze", RESEARCH, "--provider", "acme"], "acme"),
        (["analyze", RESEARCH, "--model", "gpt-nope"], "gpt-nope"),
        (["analyze", RESEARCH, "--ttl", "2h"], "--ttl"),
        (["analyze", RESEARCH, "--json", "--csv"], "--csv"),
        (["analyze", str(SAMPLES / "missing.yaml")], "missing.yaml"),
        (["compare", RESEARCH, "--base", "seed"], "--head"),
        (["compare", RESEARCH, "--base", "seed", "--head", "nope"], "nope"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert needle in err and len(err.strip().splitlines()) == 1
