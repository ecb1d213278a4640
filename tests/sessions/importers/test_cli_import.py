"""``python -m assembler import`` end to end, in a subprocess."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest
from importer_helpers import CLAUDE, CODEX, REQUESTS, cli

from assembler.cli import import_commands as cli_import
from assembler.errors import UsageError
from assembler.sessions.loader import load_session
from assembler.sessions.replay import replay


@pytest.mark.parametrize(
    ("fmt", "source", "suffix", "count"),
    [
        ("claude-code", CLAUDE, ".yaml", 12),
        ("codex", CODEX, ".jsonl", 5),
        ("requests", REQUESTS, ".yml", 8),
    ],
)
def test_import_writes_a_session_that_loads(
    tmp_path: Path, fmt: str, source: Path, suffix: str, count: int
) -> None:
    out = tmp_path / f"imported{suffix}"
    done = cli("import", fmt, str(source), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith(f"wrote {out}: {count} LLM calls from {source} ({fmt}, session ")
    assert len(replay(load_session(out))) == count
    analyzed = cli("analyze", str(out), "--json")
    assert analyzed.returncode == 0, analyzed.stderr


def test_subagents_option(tmp_path: Path) -> None:
    main = tmp_path / "main.jsonl"
    shutil.copy(CLAUDE, main)
    out = tmp_path / "s.jsonl"
    folder = CLAUDE.parent / "subagents"
    done = cli("import", "claude-code", str(main), "-o", str(out), "--subagents", str(folder))
    assert done.returncode == 0, done.stderr
    assert "12 LLM calls" in done.stdout


def test_malformed_lines_are_a_warning_on_stderr(tmp_path: Path) -> None:
    source = tmp_path / "t.jsonl"
    source.write_text(REQUESTS.read_text("utf-8") + '{"timestamp": "2026-03-12T16:00', "utf-8")
    done = cli("import", "requests", str(source), "-o", str(tmp_path / "o.yaml"))
    assert done.returncode == 0
    assert done.stderr == (
        "warning: skipped 1 malformed line (first at line 9: not valid JSON: "
        "Unterminated string starting at)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["codex", "missing.jsonl"], "missing.jsonl: no such file"),
        (["yaml", str(CLAUDE)], "argument format: invalid choice: 'yaml'"),
        (
            ["codex", str(CODEX), "--subagents", "x"],
            "--subagents applies to claude-code, not to codex",
        ),
        (["claude-code", str(CODEX)], "no API request found"),
        (["requests", str(CLAUDE)], ":1: request: expected the JSON body as an object, found null"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    fmt, source, *rest = args
    done = cli("import", fmt, source, "-o", str(tmp_path / "o.yaml"), *rest)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert message in done.stderr
    assert not (tmp_path / "o.yaml").exists()


def test_a_session_over_the_loader_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every step repeats its request, so a long transcript can outgrow the loader's limit."""
    monkeypatch.setattr(cli_import, "MAX_BYTES", 10_000)
    out = tmp_path / "o.jsonl"
    args = argparse.Namespace(
        format="claude-code", file=str(CLAUDE), output=str(out), subagents=None
    )
    with pytest.raises(
        UsageError, match=r"would be about [\d,]+ bytes, over the 10,000-byte limit"
    ):
        cli_import.cmd_import(args)
    assert not out.exists()


def test_without_an_output_name_it_writes_json_lines_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = cli("import", "codex", str(CODEX))
    assert done.returncode == 0, done.stderr
    out = tmp_path / f"{CODEX.stem}.session.jsonl"
    assert done.stdout.startswith(f"wrote {out.name}: 5 LLM calls")
    first = out.read_text("utf-8").splitlines()[0]
    assert first.startswith('{"format": "context-session/1"')
    assert len(replay(load_session(out))) == 5


def test_yaml_falls_back_to_the_pure_emitter_without_libyaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    from assembler.analysis.engine import import_file
    from assembler.sessions.generator import write_session

    data = import_file("codex", CODEX)
    write_session(data, tmp_path / "c.yaml")
    monkeypatch.delattr(yaml, "CSafeDumper")
    write_session(data, tmp_path / "pure.yaml")
    fast, pure = load_session(tmp_path / "c.yaml"), load_session(tmp_path / "pure.yaml")
    assert [e.at for e in fast.events] == [e.at for e in pure.events]
    assert replay(fast)[-1].call.request == replay(pure)[-1].call.request
