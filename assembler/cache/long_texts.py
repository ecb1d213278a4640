"""Counting the tokens of a long text: the two calls into tiktoken that are not safe.

tiktoken splits a text into pieces with a backtracking regex (Rust's fancy-regex) and
then runs BPE on each piece. On a run of blanks past some 100,000 characters (a
1,000,000-space block, measured) that regex overflows its stack and tiktoken panics:
a ``PanicException`` (not an ``Exception``) and a Rust backtrace on stderr. Such a text
is split here with the same pattern by the ``regex`` package (a tiktoken dependency, whose
backtracking keeps its own stack) and each piece goes to tiktoken's own BPE: the same
pieces, so the same count (checked against tiktoken on generated texts in the tests).

A long text is also one call that nothing can stop midway: the app's time budget
(a watchdog that raises into the page's thread) waits for it to return. Under
:func:`deadline`, a long text that would not be counted before the deadline at the
slowest speed seen is not started: :class:`PastDeadline` is raised instead.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache

import regex
import tiktoken

#: Texts from this length on take the checks below; shorter ones go to tiktoken at once.
LONG = 65_536
#: A run of blanks this long sends the text to the piecewise count (100,000 spaces
#: still pass tiktoken's regex, 1,000,000 overflow it: measured with tiktoken 0.14).
_BLANK_RUN = re.compile(rf"\s{{{LONG}}}")
#: The slowest texts measured: 4,000,000 spaces counted by pieces, 5.2 s of CPU with
#: cl100k_base (1.3 µs a character); a 4,194,304-character run of one letter 3.2 s with
#: o200k_base; ordinary prose is some twenty times faster.
SLOWEST_SECONDS_PER_CHAR = 1.3e-6


class PastDeadline(BaseException):
    """A long text left uncounted: it could not be counted before the deadline. A
    BaseException, so that no ``except Exception`` takes it for a bad input."""


_local = threading.local()
_speed = {"seconds_per_char": SLOWEST_SECONDS_PER_CHAR}


@contextmanager
def deadline(at: float) -> Iterator[None]:
    """Within the block, on this thread, no long text is started that would end after
    ``at`` (``time.monotonic()``) at the slowest speed seen."""
    before = getattr(_local, "at", None)
    _local.at = at
    try:
        yield
    finally:
        _local.at = before


def length(enc: tiktoken.Encoding, encode: Callable[[str], list[int]], text: str) -> int:
    """The number of tokens of ``text`` (``len(text) >= LONG``), ``encode`` being
    ``enc.encode_ordinary``."""
    at: float | None = getattr(_local, "at", None)
    rate = _speed["seconds_per_char"]
    if at is not None and time.monotonic() + len(text) * rate > at:
        raise PastDeadline(f"a text of {len(text):,} characters")
    started = time.monotonic()
    n = by_pieces(enc, text) if _BLANK_RUN.search(text) else len(encode(text))
    # Slower than the slowest measured (a loaded machine): the next estimate waits longer.
    _speed["seconds_per_char"] = max(
        SLOWEST_SECONDS_PER_CHAR, (time.monotonic() - started) / len(text)
    )
    return n


@cache
def _pieces(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def by_pieces(enc: tiktoken.Encoding, text: str) -> int:
    """The count tiktoken gives ``text``, with the split done here (see the module)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: replaced, as tiktoken's encode_ordinary does
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    ranks = enc._mergeable_ranks
    single = enc._core_bpe.encode_single_piece
    n = 0
    for match in _pieces(enc._pat_str).finditer(text):
        piece = match.group().encode("utf-8")
        n += 1 if piece in ranks else len(single(piece))
    return n
