"""What one input may cost: bounded reads and the limits every reader shares.

A few hundred bytes can name a FIFO (a read that never ends), ``/dev/zero`` (a
read that never stops) or a file whose ``stat`` size lies (``/proc``): so a file
is opened without blocking, must be a regular file, and is read up to its cap
plus one byte whatever ``stat`` says.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: The longest single text field (characters): about a million tokens, the largest
#: context window a provider sells; a longer value cannot be one request's text.
MAX_FIELD_CHARS = 4 * 1024 * 1024


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
