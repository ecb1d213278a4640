"""Long texts: a run of blanks tiktoken's own regex cannot split is counted by pieces to
the same number, and within ``stoppable`` the count is the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.cache import long_texts
from assembler.cache.tokenizers import ENCODINGS, TokenCounter, encoding

ROOT = Path(__file__).resolve().parents[2]

# Runs of what tiktoken's pattern tells apart: letters of both cases, digits, blanks of
# each kind, punctuation, contractions, other scripts, emoji and a lone surrogate.
_RUNS = st.sampled_from(
    ["a", "Z", "é", "7", " ", "\t", "\n", "\r\n", "\u00a0", "'s", "!", "/", "语", "😀", "\ud800"]
)
texts = st.lists(st.tuples(_RUNS, st.integers(1, 40)), min_size=1, max_size=30).map(
    lambda runs: "".join(piece * n for piece, n in runs)
)


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from(ENCODINGS))
def test_pieces_count_what_tiktoken_counts(text: str, name: str) -> None:
    enc = encoding(name)
    assert long_texts.by_pieces(enc, text) == len(enc.encode_ordinary(text))


@pytest.mark.parametrize("name", ENCODINGS)
def test_long_blank_runs_next_to_text_count_as_tiktoken_counts_them(name: str) -> None:
    """Runs of 70,000 blanks: past the length that sends a text to the pieces, short
    enough for tiktoken's own regex, so both counts exist to compare."""
    enc = encoding(name)
    for text in ("a" + " " * 70_000 + "b", "\t" * 70_000, "x\n" + " \n" * 35_000 + " y"):
        assert TokenCounter(name).count(text) == len(enc.encode_ordinary(text))


def test_a_million_blanks_in_a_request_analyse_without_a_panic(tmp_path: Path) -> None:
    """tiktoken's regex overflows its stack on these (a Rust panic, not an Exception)."""
    from assembler.sessions.generator import generate_session, write_session

    data = generate_session(2, 0)
    call = next(e for e in data["events"] if e["type"] == "llm")
    call["request"] = {
        "blocks": [
            {"section": "system", "text": "You help."},
            {"section": "messages", "role": "user", "text": "a" + " " * 1_000_000 + "b"},
            {"section": "messages", "role": "user", "text": "\t" * 1_000_000},
            {"section": "messages", "role": "user", "text": "\u3000" * 1_000_000},
        ]
    }
    path = tmp_path / "blanks.jsonl"
    write_session(data, path)
    run = subprocess.run(
        [sys.executable, "-m", "assembler", "analyze", str(path), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "panicked" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert '"tokens"' in run.stdout


def test_a_stoppable_count_is_the_count() -> None:
    counter, plain = TokenCounter("o200k_base"), TokenCounter("o200k_base")
    texts = ["word " * (long_texts.LONG // 2), "a" + " " * 200_000 + "b", "short text"]
    with long_texts.stoppable():
        assert counter.counts(texts) == plain.counts(texts)
        assert counter.count(texts[0] + "x") == plain.count(texts[0] + "x")
