"""``json.dumps(value, indent=2, ensure_ascii=False)``, the same text, mostly from the C encoder.

With ``indent`` set, the standard library encodes in Python, one generator step
per value; without it, in C. A container holding only scalars (and empty
containers) is laid out with indent 2 exactly as the C encoder lays it out
when its item separator is a comma, a line break and the indentation: the
braces are then the only characters left to place. Only containers holding
other containers, or keys that are not strings, are walked here.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any

_SCALAR = {str, int, float, bool, type(None)}
_quote: Callable[[str], str] = json.encoder.encode_basestring
_encoders: dict[int, Callable[[Any], str]] = {}


def _refuse(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _encoder(level: int) -> Callable[[Any], str]:
    """The C encoder whose item separator ends a line and indents the next as at ``level``;
    made once per level (``json.dumps`` with separators would make one per call)."""
    encode = _encoders.get(level)
    if encode is None:
        separator = ",\n" + "  " * (level + 1)
        make: Any = getattr(json.encoder, "c_make_encoder", None)
        if make is None:  # an interpreter without the C accelerator
            encode = json.JSONEncoder(ensure_ascii=False, separators=(separator, ": ")).encode
        else:
            c = make(None, _refuse, _quote, None, ": ", separator, False, False, True)

            def encode(value: Any) -> str:
                return "".join(c(value, 0))

        encode = _encoders[level] = encode
    return encode


def _flat(values: Any) -> bool:
    # by exact type, at C speed; anything else (a subclass, an empty container)
    # takes the walk below, which writes the same text
    return set(map(type, values)) <= _SCALAR


def _member(value: Any, level: int) -> str:
    kind = type(value)
    if kind is str:  # most members: no call through the walk
        return _quote(value)
    if kind is int:
        return int.__repr__(value)
    return dumps_indented(value, level)


def dumps_indented(value: Any, level: int = 0) -> str:
    """``value`` as indented JSON, its inner lines indented as at nesting ``level``
    (its first line is not: it follows whatever the caller wrote before it)."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        pad = "\n" + "  " * (level + 1)
        if _flat(value.values()):
            text = _encoder(level)(value)
        elif all(type(k) is str for k in value):
            text = (
                "{"
                + ("," + pad).join(
                    _quote(k) + ": " + _member(v, level + 1) for k, v in value.items()
                )
                + "}"
            )
        else:  # keys the encoder converts (numbers, None, booleans): rare, left to it
            text = json.dumps(value, indent=2, ensure_ascii=False)
            return text.replace("\n", "\n" + "  " * level)
        return "{" + pad + text[1:-1] + pad[:-2] + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        pad = "\n" + "  " * (level + 1)
        if _flat(value):
            text = _encoder(level)(value)
        else:
            text = "[" + ("," + pad).join(_member(v, level + 1) for v in value) + "]"
        return "[" + pad + text[1:-1] + pad[:-2] + "]"
    return _encoder(level)(value)
