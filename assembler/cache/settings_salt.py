"""Request settings as part of the cache key: each setting salts the prefix level it invalidates."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields

from assembler.sessions.model import RequestSettings

#: The prefix levels in order; a level's salt enters the key at its first block.
SECTIONS = {"tools": 0, "system": 1, "messages": 2}
_NAMES = tuple(f.name for f in fields(RequestSettings))
_NONE = (0, 0, 0)


def _value(settings: RequestSettings | None, name: str) -> object:
    return None if settings is None else getattr(settings, name)


def level_salts(
    settings: RequestSettings | None, level_of: Callable[[str], str | None]
) -> tuple[int, int, int]:
    """One hash per level of the values of the settings that invalidate that level."""
    if settings is None:
        return _NONE
    parts: list[list[tuple[str, object]]] = [[], [], []]
    for name in _NAMES:
        level = level_of(name)
        value = getattr(settings, name)
        if level is not None and value is not None:
            parts[SECTIONS[level]].append((name, value))
    a, b, c = (hash(tuple(p)) if p else 0 for p in parts)  # an empty level: as if unrecorded
    return a, b, c


def _text(value: object) -> str:
    return (
        "unset" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    )


def changed_settings(
    before: RequestSettings | None,
    now: RequestSettings | None,
    level_of: Callable[[str], str | None],
) -> tuple[tuple[str, str, str], ...]:
    """(setting, before, now) for each cache-relevant setting whose value changed."""
    if before is None and now is None:
        return ()
    return tuple(
        (name, _text(a), _text(b))
        for name in _NAMES
        if level_of(name) is not None and (a := _value(before, name)) != (b := _value(now, name))
    )
