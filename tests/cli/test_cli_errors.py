"""Bad arguments: one line naming the file, the flag and what was expected; exit 2; no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from assembler.cli.main import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
S = str(SAMPLES / "research_agent.yaml")
FOLDER = str(SAMPLES)
STEP_EXPECTED = "expected a step number 1 to 21 or a label (walk-1, walk-2, walk-3, …)"
NO_PRICE = "genai-prices has no price for model 'nope' of provider"
COMPARE = ("compare", S, "--base", "seed", "--head", "situation-first")


def error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and err.count("\n") == 1
    assert "Traceback" not in err
    return err.removeprefix("error: ").rstrip("\n")


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("①", f"{S}: --step: {STEP_EXPECTED}, found '①'"),
        ("-1", f"{S}: --step: {STEP_EXPECTED}, found '-1'"),
        ("1.5", f"{S}: --step: {STEP_EXPECTED}, found '1.5'"),
        ("walk-99", f"{S}: --step: {STEP_EXPECTED}, found 'walk-99'"),
        ("0", f"{S}: --step: step 0 is out of range; the session has steps 1 to 21"),
        ("22", f"{S}: --step: step 22 is out of range; the session has steps 1 to 21"),
    ],
)
def test_render_step_names_the_file_and_what_was_expected(
    capsys: pytest.CaptureFixture[str], selector: str, message: str
) -> None:
    assert error(capsys, "render", S, "--step", selector) == message


def test_render_step_without_labels_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "g.jsonl"
    assert main(["generate", "--steps", "3", "-o", str(path)]) == 0
    capsys.readouterr()
    assert error(capsys, "render", str(path), "--step", "x") == (
        f"{path}: --step: expected a step number 1 to 3 (the session has no labelled steps),"
        " found 'x'"
    )


def test_render_help_names_a_real_label_form(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["render", "--help"])
    help_text = capsys.readouterr().out
    assert "①" not in help_text and "walk-1" in help_text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("analyze", S, "--model", "nope"), f"{S}: --model: {NO_PRICE} 'anthropic'"),
        (
            ("analyze", S, "--provider", "openai", "--model", "claude-sonnet-4-5"),
            f"{S}: --model: genai-prices has no price for model 'claude-sonnet-4-5' of provider"
            " 'openai'",
        ),
        (("analyze", FOLDER, "--provider", "openai", "--model", "nope"), f"{FOLDER}: --model: "),
        (("recommend", S, "--model", "nope"), f"{S}: --model: {NO_PRICE} 'anthropic'"),
        (("recommend", S, "--provider", "openai", "--model", "nope"), f"{S}: --model: {NO_PRICE}"),
        (("recommend", S, "--provider", "nope"), f"{S}: --provider: no cache simulator"),
        ((*COMPARE, "--model", "nope"), f"{S}: --model: {NO_PRICE} 'anthropic'"),
        ((*COMPARE, "--provider", "openai", "--model", "nope"), f"{S}: --model: {NO_PRICE}"),
        ((*COMPARE, "--provider", "nope"), f"{S}: --provider: no cache simulator"),
        (
            ("compare", FOLDER, "--base", "seed", "--head", "seed", "--provider", "openai",
             "--model", "nope"),
            f"{FOLDER}: --model: {NO_PRICE} 'openai'",
        ),
    ],
)  # fmt: skip
def test_every_command_checks_provider_and_model_alike(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    assert error(capsys, *argv).startswith(message)


def test_rules_refuses_a_model_nobody_prices(capsys: pytest.CaptureFixture[str]) -> None:
    assert error(capsys, "rules", "--model", "nope") == (
        "--model: expected a model genai-prices prices for one of anthropic, openai, gemini,"
        " deepseek, found 'nope'"
    )
    assert error(capsys, "rules", "--provider", "openai", "--model", "claude-sonnet-4-5") == (
        "--model: genai-prices has no price for model 'claude-sonnet-4-5' of provider 'openai'"
        " (Unable to find model with model_ref='claude-sonnet-4-5' in openai)"
    )
    assert error(capsys, "rules", "--provider", "nope").startswith("--provider: no cache simulator")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ("analyze", S, "--workers", "0"),
            f"{S}: --workers: expected an integer from 1 to 1,024, found 0",
        ),
        (
            ("analyze", S, "--workers", "100000"),
            f"{S}: --workers: expected an integer from 1 to 1,024, found 100000",
        ),
        (("analyze", S, "--address", "x"), "--address applies to --engine ray"),
        (
            ("recommend", S, "--sessions-per-month", "-1"),
            f"{S}: --sessions-per-month: expected an integer ≥ 0, found -1",
        ),
        (
            (*COMPARE, "--max-cost-increase", "-1"),
            f"{S}: --max-cost-increase: expected a finite number ≥ 0, found -1.0",
        ),
    ],
)
def test_numeric_flags_name_the_file_and_what_was_expected(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    assert error(capsys, *argv) == message


def test_otlp_write_error_names_the_file_and_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert error(capsys, "analyze", S, "--otlp", str(tmp_path)) == (
        f"{tmp_path}: --otlp: expected a regular file or a new path, found a folder;"
        " nothing written"
    )


def test_batch_counts_are_singular_for_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", FOLDER, "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert " · 1 worker · " in out and "1 workers" not in out
    assert "      1 miss   " in out and " 1 misses" not in out


def test_walkthrough_header_has_no_dangling_separator(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["walkthrough", str(SAMPLES / "review_agent_paths.yaml")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "step 1 top-level-ask" in lines
    assert not any(line.endswith(" · ") for line in lines if line.startswith("step "))
