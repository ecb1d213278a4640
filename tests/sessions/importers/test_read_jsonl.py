"""A JSON Lines recording read line by line: half of a surrogate pair, escaped in either
case of hex digit, comes out as whole text."""

from __future__ import annotations

from pathlib import Path

import pytest

from assembler.sessions.importers.records import Skipped, read_jsonl


@pytest.mark.parametrize("escape", ["\\ud83d", "\\uD83D", "\\uDe00"])
def test_a_lone_surrogate_in_any_case_becomes_a_replacement_character(
    tmp_path: Path, escape: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"text": "half ' + escape + ' an emoji"}\n', encoding="ascii")
    [record] = read_jsonl(path, Skipped())
    assert record.data == {"text": "half \ufffd an emoji"}
    assert record.data["text"].encode("utf-8")  # whole text: it encodes


def test_an_escaped_pair_is_joined(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"text": "\\uD83D\\uDE00"}\n', encoding="ascii")
    [record] = read_jsonl(path, Skipped())
    assert record.data == {"text": "\U0001f600"}
