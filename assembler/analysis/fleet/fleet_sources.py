"""Where fleet sessions live: local paths, or URIs of a filesystem pyarrow reads.

A target with ``://`` (``file://``, ``s3://``, ``gs://``, ``abfs://``, ``hdfs://`` …)
is opened with ``pyarrow.fs.FileSystem.from_uri``; anything else is a local folder
or glob as in :mod:`assembler.analysis.fleet.batch`. pyarrow is imported only for a URI.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from assembler.analysis.fleet.batch import GLOB_CHARS, SESSION_SUFFIXES, session_paths
from assembler.sessions.model import MAX_BYTES, Session, SessionError


def is_uri(target: str) -> bool:
    return "://" in target


def _filesystem(uri: str) -> tuple[Any, str]:
    try:
        from pyarrow import fs
    except ImportError:
        raise ValueError(f"{uri}: reading a URI needs pyarrow: pip install .[fleet]") from None
    try:
        return fs.FileSystem.from_uri(uri)  # type: ignore[no-any-return]
    except Exception as exc:  # pyarrow raises several kinds for a bad URI
        raise ValueError(f"{uri}: cannot open this URI: {str(exc).splitlines()[0]}") from None


def _scheme(uri: str) -> str:
    return uri.split("://", 1)[0] + "://"


def _uri_of(scheme: str, path: str) -> str:
    # from_uri("file:///a/b") gives "/a/b"; from_uri("s3://bucket/k") gives "bucket/k"
    return scheme + path if path.startswith("/") or scheme != "file://" else scheme + "/" + path


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """``**/`` any folders, ``*`` and ``?`` within one name, ``[...]`` a class (as ``glob``)."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            out.append("[" + pattern[i + 1 : end].replace("!", "^", 1) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def uri_paths(target: str) -> list[str]:
    """The session files of a folder URI (not recursive) or a URI glob (``**`` recurses),
    as URIs, sorted. Raises ``ValueError`` when none."""
    from pyarrow import fs as pafs

    scheme = _scheme(target)
    if GLOB_CHARS & set(target):
        first = min(target.index(c) for c in GLOB_CHARS if c in target)
        base_uri = target[: target.rindex("/", 0, first)]
        filesystem, base = _filesystem(base_uri)
        rest = target[len(base_uri) :]
        selector = pafs.FileSelector(
            base, recursive=rest.count("/") > 1 or "**" in rest, allow_not_found=True
        )
        rule = _glob_regex(base.rstrip("/") + rest)
        found = [
            i.path
            for i in filesystem.get_file_info(selector)
            if i.type == pafs.FileType.File and rule.fullmatch(i.path)
        ]
        what = "pattern"
    else:
        filesystem, base = _filesystem(target)
        info = filesystem.get_file_info(base)
        if info.type != pafs.FileType.Directory:
            raise ValueError(f"{target}: not a folder (give a folder or a quoted glob)")
        selector = pafs.FileSelector(base, recursive=False)
        found = [
            i.path
            for i in filesystem.get_file_info(selector)
            if i.type == pafs.FileType.File and Path(i.path).suffix in SESSION_SUFFIXES
        ]
        what = "folder"
    if not found:
        raise ValueError(f"{target}: no session file in this {what}")
    return [_uri_of(scheme, p) for p in sorted(found)]


def sources(target: str) -> list[str]:
    """The sessions of a target, local or URI, as strings a fleet task can load."""
    if is_uri(target):
        return uri_paths(target)
    return [str(p) for p in session_paths(target)]


def load_source(source: str) -> Session:
    """One session from a local path or a URI (same size limit and errors as a file)."""
    from assembler.sessions.loader import load_session, parse_bytes

    if not is_uri(source):
        return load_session(source)
    try:
        filesystem, path = _filesystem(source)
        info = filesystem.get_file_info(path)
        if info.size is not None and info.size > MAX_BYTES:
            raise SessionError(
                source, f"the file is {info.size:,} bytes; the limit is {MAX_BYTES:,}"
            )
        with filesystem.open_input_stream(path) as stream:
            raw = stream.read()
    except (OSError, ValueError) as exc:
        if isinstance(exc, SessionError):
            raise
        raise SessionError(source, f"cannot read the file: {str(exc).splitlines()[0]}") from None
    return parse_bytes(bytes(raw), source)
