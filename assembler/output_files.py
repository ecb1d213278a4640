"""Writing an output without harming what the path already names.

An output path may name a device (``/dev/null``), a FIFO (a write that waits for a
reader for ever), a symlink, a good file from an earlier run, or one of the command's
own inputs. So a target is checked before any work, and the output is written to a new
file beside it and renamed over it only once whole: a failure leaves the target as it
was, and nothing is ever removed that was not made here. A symlink is followed: the file
it names is the one replaced, the link stays.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from assembler.errors import UsageError
from assembler.limits import file_kind

NEW_FILE_MODE = 0o666  # less the umask, as open() would give a new file


def _stat(path: str | Path, shown: str, flag: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"{shown}: {flag}: cannot use this path: {exc.strerror or exc}") from None


def output_target(
    path: str | Path,
    flag: str,
    inputs: Iterable[str | Path] = (),
    *,
    folder: bool = False,
    parents: bool = False,
) -> Path:
    """The real path ``flag`` writes ``path`` at, symlinks followed; a :class:`UsageError`
    (one line naming the path, the flag and what was expected) for a device, a FIFO, a
    folder (a file when ``folder``), one of ``inputs``, or a folder that is not there
    (unless ``parents`` or ``folder``: made when written) or not writable."""
    shown = str(path)
    real = Path(os.path.realpath(path))
    info = _stat(real, shown, flag)
    want = "a folder" if folder else "a regular file"
    if info is not None:
        ok = stat.S_ISDIR(info.st_mode) if folder else stat.S_ISREG(info.st_mode)
        if not ok:
            found = "a regular file" if stat.S_ISREG(info.st_mode) else file_kind(info.st_mode)
            raise UsageError(
                f"{shown}: {flag}: expected {want} or a new path, found {found}; nothing written"
            )
        for given in inputs:
            other = _stat(given, str(given), flag) if "://" not in str(given) else None
            if other is not None and os.path.samestat(info, other):
                raise UsageError(
                    f"{shown}: {flag}: this is the input {given}; expected another path"
                )
    parent = real if folder and info is not None else real.parent  # where files are made
    parents = parents or folder  # a folder is made with its missing parents
    while parents and not os.path.lexists(parent) and parent != parent.parent:
        parent = parent.parent  # the folders below it are made when written
    if not parent.is_dir():
        raise UsageError(
            f"{shown}: {flag}: cannot write: no folder {parent}; expected {want}'s path"
            " in an existing folder"
        )
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{shown}: {flag}: cannot write in the folder {parent}")
    return real


@contextmanager
def replacing(path: str | Path, flag: str, inputs: Iterable[str | Path] = ()) -> Iterator[Path]:
    """A new, empty file beside ``path``'s target for the block to write (same suffix);
    renamed over the target when the block ends without an error, removed otherwise."""
    target = output_target(path, flag, inputs)
    existing = _stat(target, str(path), flag)
    temp = target.with_name(f".{target.stem}.{secrets.token_hex(4)}.part{target.suffix}")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, NEW_FILE_MODE)
        try:
            if existing is not None:  # a replaced file keeps its permissions
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))
        finally:
            os.close(fd)
    except OSError as exc:
        raise UsageError(f"{path}: {flag}: cannot write: {exc.strerror or exc}") from None
    try:
        yield temp
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise UsageError(f"{path}: {flag}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_text(
    path: str | Path,
    text: str,
    flag: str,
    inputs: Iterable[str | Path] = (),
    *,
    parents: bool = False,
) -> None:
    """``text`` (UTF-8) at ``path``, as :func:`replacing` writes; ``parents``: the missing
    folders above it made first."""
    if parents:
        output_target(path, flag, inputs, parents=True)
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{path}: {flag}: cannot make its folder: {exc.strerror}") from None
    with replacing(path, flag, inputs) as temp:
        temp.write_text(text, "utf-8")
