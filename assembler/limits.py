"""What one input may cost: bounded reads and the limits every reader shares.

A few hundred bytes can name a FIFO (a read that never ends), ``/dev/zero`` (a
read that never stops) or a file whose ``stat`` size lies (``/proc``): so a file
is opened without blocking, must be a regular file, and is read up to its cap
plus one byte whatever ``stat`` says.
"""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path

# --- one definition of each limit: the loader checks them, the importers apply them ---

#: The longest single text field (characters): about a million tokens, the largest
#: context window a provider sells; a longer value cannot be one request's text.
MAX_FIELD_CHARS = 4 * 1024 * 1024
#: The largest integer a session holds: what a JSON number keeps exactly (2**53 - 1,
#: RFC 8259 section 6); a larger token count is none (priced, it prints ``cost: $inf``).
MAX_INT = 2**53 - 1
#: Digits of an integer converted at all: the interpreter's own limit on int(text),
#: which a longer number would hit as an exception deep in a reader.
MAX_DIGITS = 4300
#: Dates are kept between these years (UTC): a day's margin at the calendar's ends, so
#: time zone offsets, gaps and cache lifetimes can be added to any of them.
FIRST_YEAR, LAST_YEAR = 2, 9998
#: A name in a session (a model, an agent, a session id): the schema's ``$defs.name``.
MAX_NAME_CHARS = 200
#: An id read to link records (a response id, a conversation id): real ones are under
#: a hundred characters (UUIDs 36, OpenAI response ids about 50, Bedrock model ARNs about
#: 100); past this one is not an id, and every key and message quoting it stays small.
MAX_ID_CHARS = 1024
#: A URL: RFC 9110 section 4.1 asks every sender and recipient to take at least 8,000
#: octets; a longer one is not an API endpoint.
MAX_URL_CHARS = 8000
#: An HTTP status code: three digits, 100 to 599 (RFC 9110 section 15).
STATUS_CODES = range(100, 600)
#: A session file, read up to this whatever ``stat`` says.
MAX_SESSION_BYTES = 256 * 1024 * 1024
#: A transcript, request log or trace to import (transcripts grow large; past this one
#: cannot be a transcript); a zip's members unpack to this much at most, all together.
MAX_IMPORT_BYTES = 200 * 1024 * 1024
#: Entries of a zip, counted from its directory before anything is extracted: a
#: Claude Code session with every subagent and compaction file is a few hundred.
MAX_ZIP_ENTRIES = 10_000


def count_problem(value: object) -> str | None:
    """Why ``value`` is not a token count (a whole number 0 to :data:`MAX_INT`; a
    float that is one is taken), or None when it is one. ``null`` is left to the caller."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"expected a whole number of tokens, found {kind_of(value)}"
    if isinstance(value, float) and not value.is_integer():
        return f"expected a whole number of tokens, found {clip(repr(value), 40)}"
    if not 0 <= value <= MAX_INT:
        return f"expected a whole number of tokens from 0 to {MAX_INT:,}, found {clip(repr(value), 40)}"
    return None


def time_problem(at: datetime) -> str | None:
    """Why ``at`` is outside the years a session holds, or None."""
    try:
        year = at.astimezone(UTC).year if at.tzinfo is not None else at.year
    except OverflowError:  # the offset moves it off the calendar
        year = at.year
    else:
        if FIRST_YEAR <= year <= LAST_YEAR:
            return None
    return f"expected a time between the years {FIRST_YEAR} and {LAST_YEAR}, found the year {year}"


def kind_of(value: object) -> str:
    """What a JSON value is, as an error line names it ("a string", "an object"…)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class ReadRefused(ValueError):
    """The file is not something we read; ``str()`` says why, without the path."""


def read_capped(path: str | Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; :class:`ReadRefused` otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ReadRefused(f"cannot read the file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReadRefused(f"not a regular file ({file_kind(info.st_mode)}); expected a file")
        if info.st_size > limit:
            raise ReadRefused(f"the file is {info.st_size:,} bytes; the limit is {limit:,}")
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise ReadRefused(f"the file is over the limit of {limit:,} bytes")
        return b"".join(chunks)
    except OSError as exc:
        raise ReadRefused(f"cannot read the file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def file_kind(mode: int) -> str:
    """What a non-regular file is, as a message names it ("a pipe", "a device"…)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def one_line(text: str, limit: int = 400) -> str:
    """A message on one line (any whitespace run is one space), long ones cut in the middle."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    keep = (limit - 1) // 2
    return f"{flat[:keep]}…{flat[-keep:]}"


def clip(text: str, limit: int = 60) -> str:
    """A user value quoted in a message: cut at ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
