"""``compare --junit``: valid XML, one test case per session, a failure past a threshold."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from assembler.analysis.reports.junit import CaseResult, junit_xml
from assembler.cli.main import main

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"
RESEARCH = SAMPLES / "research_agent.yaml"
# Under OpenAI's token-prefix cache, situation-first puts per-call text in front of the
# call tree: the hit ratio drops by far more than 2 points (see test_compare_cli.py).
BREAKING = ["--base", "seed", "--head", "situation-first", "--provider", "openai"]
SAME = ["--base", "seed", "--head", "seed", "--provider", "openai"]


def _cases(path: Path) -> tuple[ET.Element, list[ET.Element]]:
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert root.tag == "testsuites" and suite is not None
    return suite, suite.findall("testcase")


def test_failure_when_the_threshold_is_exceeded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports" / "cache.xml"
    code = main(["compare", str(RESEARCH), *BREAKING, "--model", "gpt-5", "--junit", str(out)])
    capsys.readouterr()
    assert code == 1
    suite, cases = _cases(out)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "1", "0")
    (case,) = cases
    assert case.get("name") == f"research-agent-demo ({RESEARCH})"
    assert case.get("classname") == "context-cache-gate.seed-vs-situation-first"
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "threshold"
    assert "hit ratio drop" in (failure.get("message") or "")
    assert "> 2 " in (failure.get("message") or "")
    assert "breaking component situation" in (failure.text or "")


def test_no_failure_within_thresholds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cache.xml"
    code = main(
        ["compare", str(RESEARCH), *SAME, "--model", "gpt-5", "--junit", str(out), "--json"]
    )
    capsys.readouterr()
    assert code == 0
    suite, (case,) = _cases(out)
    assert suite.get("failures") == "0"
    assert case.find("failure") is None and case.find("system-out") is not None
    # a looser threshold turns the breaking comparison into a pass too
    code = main(
        [
            "compare",
            str(RESEARCH),
            *BREAKING,
            "--model",
            "gpt-5",
            "--max-hit-ratio-drop",
            "100",
            "--max-cost-increase",
            "1000",
            "--junit",
            str(out),
        ]
    )
    capsys.readouterr()
    assert code == 0 and _cases(out)[0].get("failures") == "0"


def test_a_folder_gives_one_case_per_session_and_an_error_for_a_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    shutil.copy(RESEARCH, sessions / "research.yaml")
    shutil.copy(SAMPLES / "coding_agent_midnight.yaml", sessions / "coding.yaml")
    (sessions / "bad <&>.yaml").write_text("format: nope\n", "utf-8")
    out = tmp_path / "cache.xml"
    code = main(["compare", str(sessions), *BREAKING, "--model", "gpt-5", "--junit", str(out)])
    printed = capsys.readouterr().out
    assert code == 2  # a session could not be compared
    assert "3 sessions compared" in printed
    suite, cases = _cases(out)
    assert suite.get("tests") == "3" and suite.get("errors") == "1"
    names = [c.get("name") or "" for c in cases]
    assert any("bad <&>.yaml" in n for n in names)  # escaped in the file, intact once parsed
    bad = next(c for c in cases if "bad <&>" in (c.get("name") or ""))
    error = bad.find("error")
    assert error is not None and "context-session/1" in (error.get("message") or "")


def test_escaping_and_forbidden_characters() -> None:
    nasty = 'a "quoted" <tag> & \x01 control ]]> end'
    xml = junit_xml([CaseResult("x<&>.yaml", 0.5, error=nasty)], 2.0, 5.0)
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(xml.split("\n", 1)[1])
    case = root.find("testsuite/testcase")
    assert case is not None
    error = case.find("error")
    assert error is not None
    assert error.get("message") == 'a "quoted" <tag> & \ufffd control ]]> end'
    assert case.get("name") == "x<&> (x<&>.yaml)"
    assert root.get("time") == "0.500"
