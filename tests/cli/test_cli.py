from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.runner import cli_process

SAMPLE = str(Path(__file__).parents[2] / "sample_sessions" / "research_agent.yaml")

EXPECTED = {
    "L0": ["identity", "inline_prompt", "tool_enforcement", "model_guidance", "platform_format",
           "skills_index", "tools", "memory_global", "environment"],
    "L1": ["pi_shield", "workspace_files", "project_memory", "user_profile",
           "git_repo_flag", "bindings", "deferred_catalog", "current_date", "call_tree"],
    "L2": ["situation", "memory_prefetch", "user_input", "output_schema", "timestamp"],
}  # fmt: skip


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_process(*args)


def test_components_json_lists_every_component_in_design_order() -> None:
    out = run("components", "--json")
    assert out.returncode == 0
    rows = json.loads(out.stdout)
    for layer, names in EXPECTED.items():
        assert [r["name"] for r in rows if r["layer"] == layer] == names
    wire = {r["name"]: r["wire"] for r in rows}
    assert wire["tools"] == "tools" and wire["call_tree"] == "history"
    assert {wire[n] for n in EXPECTED["L2"]} == {"user_message"}
    assert all({"name", "layer", "order", "cacheable", "wire"} <= set(r) for r in rows)


def test_steps_json() -> None:
    rows = json.loads(run("steps", SAMPLE, "--json").stdout)
    assert len(rows) == 21
    assert rows[1] == {
        "step": 2,
        "label": "walk-1",
        "function": "_lit_decide",
        "call_path": ["research_agent", "_pick_stage", "literature", "_lit_decide"],
        "timestamp": "2026-06-24T14:31:12Z",
    }


def test_render_wire_is_json() -> None:
    request = json.loads(run("render", SAMPLE, "--step", "3", "--wire", "anthropic").stdout)
    assert request["model"] == "claude-sonnet-4-5"
    assert request["messages"][0]["role"] == "user"


def test_generate_is_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run("generate", "--steps", "40", "--seed", "7", "-o", str(a)).returncode == 0
    assert run("generate", "--steps", "40", "--seed", "7", "-o", str(b)).returncode == 0
    assert a.read_bytes() == b.read_bytes()
    assert len(json.loads(run("steps", str(a), "--json").stdout)) == 40


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("render", SAMPLE, "--step", "99"),
            "step 99 is out of range; the session has steps 1 to 21",
        ),
        (("render", SAMPLE, "--step", "⑨"), ": --step: expected a step number 1 to 21 or a label"),
        (("render", SAMPLE, "--step", "1", "--layout", "nope"), "neither a built-in layout"),
        (("render", SAMPLE, "--step", "1", "--wire", "gemini"), "invalid choice: 'gemini'"),
        (("steps", "/no/such/file.yaml"), "/no/such/file.yaml: cannot read the file"),
        (("generate", "--steps", "0", "-o", "x.jsonl"), "--steps: expected 1 to 150,000"),
        (("frobnicate",), "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: tuple[str, ...], message: str) -> None:
    out = run(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_bad_layout_file_names_the_field(tmp_path: Path) -> None:
    layout = tmp_path / "mine.yaml"
    layout.write_text("components:\n  current_date: {layer: L7}\n")
    out = run("render", SAMPLE, "--step", "1", "--layout", str(layout))
    assert out.returncode == 2
    assert "components.current_date.layer: expected one of L0, L1, L2, found 'L7'" in out.stderr


def test_rules_prints_each_rule_with_source_and_dates_and_warns_for_an_unknown_model() -> None:
    out = run("rules", "--provider", "anthropic", "--model", "claude-haiku-5-5")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[0] == "anthropic rules for claude-haiku-5-5, version 2026-11-30"
    assert "  min_cacheable_tokens: 1024 for claude-haiku-5-5 (the default)" in lines
    assert sum(line.startswith("    source: ") for line in lines) == sum(
        line.startswith("  ") and not line.startswith("    ") for line in lines
    )
    assert any(line.startswith("    warning: claude-haiku-5-5: not listed") for line in lines)
    every = run("rules").stdout
    for provider in ("anthropic", "openai", "gemini", "deepseek"):
        assert f"{provider} rules, version " in every
    assert "generation: breakpoint for gpt-5.6" in run("rules", "--model", "gpt-5.6").stdout
    bad = run("rules", "--provider", "nope")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "nope" in bad.stderr


def test_a_bad_model_is_rejected_before_the_session_is_read(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("session: [unclosed\n", "utf-8")
    out = run("analyze", str(broken), "--provider", "anthropic", "--model", "no-such-model")
    assert out.returncode == 2
    # named as the file the flag applies to, not as a parse error at a line of it
    assert out.stderr.startswith(f"error: {broken}: --model: ") and "no-such-model" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_analyze_json_streamed_is_the_document_json_dumps_writes() -> None:
    from assembler.analysis.engine.analyzer import analyze
    from assembler.analysis.reports.report_json import analysis_json
    from assembler.sessions.loader import load_session

    out = run("analyze", SAMPLE, "--json")
    assert out.returncode == 0
    whole = json.dumps(analysis_json(analyze(load_session(SAMPLE))), indent=2, ensure_ascii=False)
    assert out.stdout == whole + "\n"


def test_an_in_process_analyze_leaves_nothing_frozen_and_the_collector_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import gc

    from assembler.cli.main import main

    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    assert main(["analyze", SAMPLE]) == 0
    capsys.readouterr()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_a_bill_is_shown_only_at_the_recorded_provider_and_model() -> None:
    """The recorded usage was billed by the recorded provider: at another provider's prices
    there is no bill, and no check of another provider's simulation against it."""
    session = str(Path(SAMPLE).with_name("coding_agent_midnight.yaml"))
    own = run("analyze", session)
    assert own.returncode == 0
    assert "billed: $" in own.stdout and "simulated vs measured" in own.stdout
    other = run("analyze", session, "--provider", "openai", "--model", "gpt-5")
    assert other.returncode == 0
    assert "billed: $" not in other.stdout and "simulated vs measured" not in other.stdout
    assert "billed: shown at the recorded provider and model" in other.stdout
    # another name of the recorded provider is still the recorded provider
    same = run("analyze", session, "--provider", "anthropic", "--model", "claude-sonnet-4-5")
    assert "billed: $" in same.stdout


def test_render_assembles_for_a_what_if_model_like_analyze() -> None:
    plain = json.loads(run("render", SAMPLE, "--step", "walk-1", "--wire", "openai").stdout)
    assert plain["model"] == "claude-sonnet-4-5"  # the format alone changes no content
    assert "Execution guidance (openai)" not in json.dumps(plain)
    out = run(
        "render", SAMPLE, "--step", "walk-1", "--wire", "openai", "--provider", "openai",
        "--model", "gpt-5",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    request = json.loads(out.stdout)
    assert request["model"] == "gpt-5"
    assert "[Execution guidance (openai)]" in json.dumps(request)
    assert "model=openai:gpt-5" in json.dumps(request)


def test_json_checks_measured_usage_only_at_the_recorded_provider() -> None:
    session = str(Path(SAMPLE).with_name("coding_agent_midnight.yaml"))
    own = json.loads(run("analyze", session, "--json").stdout)
    assert any(s["measured_check"] is not None for s in own["steps"])
    other = json.loads(run("analyze", session, "--json", "--provider", "openai", "--model", "gpt-5").stdout)  # fmt: skip
    assert all(s["measured_check"] is None for s in other["steps"])

    # the recording itself is kept: what the provider measured, step by step; no bill
    def usage(doc: dict[str, Any]) -> list[object]:
        return [
            s["measured"] and {k: v for k, v in s["measured"].items() if k != "billed_usd"}
            for s in doc["steps"]
        ]

    assert usage(other) == usage(own)
    assert all(s["measured"]["billed_usd"] is None for s in other["steps"] if s["measured"])
    assert "billed" not in other["totals"] and "billed" in own["totals"]


def test_json_carries_the_bill_the_text_report_prints() -> None:
    session = str(Path(SAMPLE).with_name("imported_claude_code.yaml"))
    text = run("analyze", session).stdout
    out = json.loads(run("analyze", session, "--json").stdout)
    billed = out["totals"]["billed"]
    line = next(x for x in text.splitlines() if x.startswith("billed: $"))
    assert line.startswith(f"billed: ${billed['usd']:,.4f} for the {billed['steps']} step")
    per_step = [s["measured"]["billed_usd"] for s in out["steps"] if s["measured"]]
    assert len(per_step) == billed["steps"]
    assert abs(sum(per_step) - billed["usd"]) < 1e-6
    after = text.splitlines()[text.splitlines().index(line) + 1]
    assert after == (
        f"simulated: ${billed['simulated_usd']:,.4f} for the same steps,"
        f" {billed['difference']:+.1%} from the bill"
    )
