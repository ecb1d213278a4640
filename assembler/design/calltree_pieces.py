"""What two successive call-tree renderings share, known without reading them.

A rendering is the join of pieces (headers, the memoized text of finished
children); the next rendering mostly repeats the same piece objects and extends
the finished children's text at its end. Comparing pieces by identity tells how
long a prefix two successive renderings share, so later stages (the segmenter,
the stored versions) need not scan a long tree for it, and an unchanged tree is
handed back as the very text of the last rendering.
"""

from __future__ import annotations

#: (new piece, the previous piece it starts with), noted by the renderer while
#: it extends a piece during one rendering
extended: list[tuple[str, str]] = []
_last_render: tuple[str, list[str]] = ("", [])
_shared: tuple[str, str, int] = ("", "", 0)

#: Pieces this short are compared by value when they are not the same object
#: (a ``children:`` line is built anew at every rendering).
_SHORT_PIECE = 256


def joined(parts: list[str]) -> str:
    """The rendering: the previous one itself when every piece is the same, else
    the join, remembering how long a prefix it shares with the previous one."""
    global _last_render, _shared
    before, old = _last_render
    keep = 0
    same = len(parts) == len(old)
    for piece, was in zip(parts, old, strict=False):
        if piece is was or (len(piece) < _SHORT_PIECE and piece == was):
            keep += len(piece) + 1  # and the line break after it
            continue
        same = False
        if any(new is piece and prev is was for new, prev in extended):
            keep += len(was)
        break
    extended.clear()
    if same:  # an unchanged tree is the very text of the last rendering
        return before
    text = "\n".join(parts)
    _shared = (before, text, min(keep, len(before), len(text)))
    _last_render = (text, parts)
    return text


def shared_prefix(before: str, after: str) -> int | None:
    """How many leading characters ``after`` is known to share with ``before``
    when they are two successive renderings (a lower bound on their common
    prefix, found without reading them); None for any other pair."""
    known = _shared
    # ``before`` may be an equal copy: a rendering equal to the one before it
    # (but built from other pieces) leaves the older text in the request
    if known[1] is after and (known[0] is before or known[0] == before):
        return known[2]
    return None
