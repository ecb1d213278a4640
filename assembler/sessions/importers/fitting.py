"""An imported document kept within what the session loader reads: the one place every
importer's output passes, so no importer writes a text the loader would refuse.

A text past :data:`assembler.limits.MAX_FIELD_CHARS` (a 5 MB tool result is real
content) keeps its head, where a cached prefix is read, with a note of what was cut;
a request block so cut keeps its size in ``tokens``, so the simulation still bills it
whole. One warning says how many texts were cut and where the first one is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assembler.limits import MAX_FIELD_CHARS

TokenCount = Callable[[str], int]


def _cut(text: str) -> str:
    note = f"\n[… {len(text):,} characters in all; the rest is not kept]"
    return text[: MAX_FIELD_CHARS - len(note)] + note


Link = tuple["Link", object] | None  # (the parent's link, this node's key): a path unspelled


def _field(link: Link, key: object) -> str:
    keys = [key]
    while link is not None:
        link, parent_key = link
        keys.append(parent_key)
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in reversed(keys)).lstrip(".")


def fit_texts(data: dict[str, Any], count: TokenCount) -> tuple[str, ...]:
    """Cut every text of ``data`` past the field limit, in place; the warning, if any."""
    cut: list[tuple[str, int]] = []
    stack: list[tuple[dict[str, Any] | list[Any], Link]] = [(data, None)]
    while stack:  # a field's path is spelled only for a text that is cut
        node, link = stack.pop()
        long: list[tuple[Any, str]] = []  # cut after the walk of the node: it may grow a key
        pairs = enumerate(node) if isinstance(node, list) else node.items()
        for key, value in pairs:
            kind = type(value)
            if kind is str:
                if len(value) > MAX_FIELD_CHARS:
                    long.append((key, value))
            elif kind is dict or kind is list:
                stack.append((value, (link, key)))
        for key, value in long:
            if key == "text" and type(node) is dict and "section" in node:
                node.setdefault("tokens", count(value))  # a block keeps its size
            node[key] = _cut(value)
            cut.append((_field(link, key), len(value)))
    if not cut:
        return ()
    field, size = max(cut, key=lambda c: c[1])
    more = f" and {len(cut) - 1:,} more" if len(cut) > 1 else ""
    return (
        f"{field} ({size:,} characters){more}: kept to its first {MAX_FIELD_CHARS:,} "
        "characters, the limit of one text in a session (a request block keeps its size)",
    )
