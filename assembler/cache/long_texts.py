"""Counting the tokens of a long text: the two calls into tiktoken that are not safe.

tiktoken splits a text into pieces with a backtracking regex (Rust's fancy-regex) and
then runs BPE on each piece. On a run of blanks past about a million characters
(measured: from 1,000,750 with o200k_base; cl100k_base still passes 4,000,000) that regex
overflows its stack and tiktoken panics:
a ``PanicException`` (not an ``Exception``) and a Rust backtrace on stderr. Such a text
is split here with the same pattern by the ``regex`` package (a tiktoken dependency, whose
backtracking keeps its own stack) and each piece goes to tiktoken's own BPE: the same
pieces, so the same count (checked against tiktoken on generated texts in the tests).

A long text is also one call that can take seconds (4,000,000 spaces: 5 s) and that
nothing stops midway: the app's time budget is a watchdog that raises into the page's
thread, and an exception raised into a thread waits for the call it is in to return.
Within :func:`stoppable`, a long text is counted on a helper thread (tiktoken lets go of
the interpreter while it counts) and this thread waits in short slices, so the stop lands
at once; the helper finishes its count unheard.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache

import regex
import tiktoken

#: Texts from this length on take the checks below; shorter ones go to tiktoken at once.
LONG = 65_536
#: A run of blanks this long sends the text to the piecewise count, far below the
#: 1,000,750 where tiktoken's regex overflows (measured with tiktoken 0.14).
_BLANK_RUN = re.compile(rf"\s{{{LONG}}}")
#: How long the waiting thread sleeps between two looks at a helper's count.
_SLICE_SECONDS = 0.05

_local = threading.local()
_helpers = ThreadPoolExecutor(max_workers=4, thread_name_prefix="long-text")


@contextmanager
def stoppable() -> Iterator[None]:
    """Within the block, on this thread, a long text is counted so that an exception
    raised into the thread (a watchdog's stop) is not held up by the count."""
    before = getattr(_local, "stoppable", False)
    _local.stoppable = True
    try:
        yield
    finally:
        _local.stoppable = before


def length(enc: tiktoken.Encoding, encode: Callable[[str], list[int]], text: str) -> int:
    """The number of tokens of ``text`` (``len(text) >= LONG``), ``encode`` being
    ``enc.encode_ordinary``."""
    if not getattr(_local, "stoppable", False):
        return _count(enc, encode, text)
    future = _helpers.submit(_count, enc, encode, text)
    while True:
        try:
            return future.result(timeout=_SLICE_SECONDS)
        except TimeoutError:
            continue


def _count(enc: tiktoken.Encoding, encode: Callable[[str], list[int]], text: str) -> int:
    return by_pieces(enc, text) if _BLANK_RUN.search(text) else len(encode(text))


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
