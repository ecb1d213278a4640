"""Recorded text made safe where it is shown: a terminal, a spreadsheet.

A session id, a label or a function name is whatever the recording holds. Printed raw,
an escape sequence in it rewrites the terminal (colours, the title, a cleared screen,
a line overwritten by a carriage return) and a bidi override reorders what a person
reads; in a CSV cell, a leading ``=`` makes a spreadsheet run a formula.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any, TextIO, cast

#: C0 controls but newline and tab, DEL, C1 controls, and the bidi marks, embeddings,
#: overrides and isolates.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: What a spreadsheet reads as the start of a formula (tab and CR: some read past them).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


#: The bytes a text may hold as they are: printable ASCII, tab and newline.
_ASCII_PLAIN = bytes(range(0x20, 0x7F)) + b"\t\n"


def printable(text: str) -> str:
    """``text`` with each control character written as its ``\\uXXXX`` escape: shown,
    never obeyed. Inside a JSON string the escape stands for the same character."""
    # Every character the expression looks for is outside printable ASCII, so it searches
    # only what is left once those bytes are deleted, at C speed: a JSON report is nearly
    # all ASCII (a tenth of the search's time on the whole text). Deleting ASCII bytes from
    # UTF-8 leaves the other characters whole (their bytes are all 0x80 or over).
    rest = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_PLAIN)
    if not rest or _CONTROLS.search(rest.decode("utf-8", "surrogatepass")) is None:
        return text
    return _CONTROLS.sub(_escape, text)


def csv_cell(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula, kept as text by a leading ``'``;
    anything else as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Every cell of ``row`` through :func:`csv_cell`."""
    return {k: csv_cell(v) for k, v in row.items()}


class PrintableStream(io.TextIOBase):
    """A text stream that writes everything through :func:`printable` to ``stream``: the
    command line's stdout and stderr while a command runs."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(printable(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding


@contextmanager
def printable_output() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`PrintableStream` inside the block."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = cast(TextIO, PrintableStream(out)), cast(TextIO, PrintableStream(err))
    try:
        yield
    finally:
        with suppress(OSError):  # a reader gone already (a closed pipe)
            sys.stdout.flush()
        sys.stdout, sys.stderr = out, err
