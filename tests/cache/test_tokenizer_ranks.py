"""Parsed BPE ranks kept between runs are used only when their sha256 checks out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assembler.cache import tokenizers


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tokenizers.encoding.cache_clear()
    yield tmp_path
    tokenizers.encoding.cache_clear()


def test_ranks_are_kept_and_read_back(fresh_cache: Path) -> None:
    first = tokenizers.encoding("cl100k_base")
    kept = tokenizers._ranks_path("cl100k_base")
    assert kept.parent == fresh_cache and kept.exists()
    tokenizers.encoding.cache_clear()
    again = tokenizers.encoding("cl100k_base")
    text = "Counting tokens offline, twice: ünïcode and code()."
    assert again.encode_ordinary(text) == first.encode_ordinary(text)
    assert again.n_vocab == first.n_vocab


def test_a_damaged_ranks_file_is_ignored_and_replaced(fresh_cache: Path) -> None:
    tokenizers.encoding("cl100k_base")
    kept = tokenizers._ranks_path("cl100k_base")
    blob = kept.read_bytes()
    kept.write_bytes(blob[:64] + blob[64:-10])  # truncated: the digest no longer matches
    assert tokenizers._cached_ranks("cl100k_base") is None
    tokenizers.encoding.cache_clear()
    enc = tokenizers.encoding("cl100k_base")
    assert len(enc.encode_ordinary("hello world")) == 2
    assert tokenizers._cached_ranks("cl100k_base") is not None  # written afresh
