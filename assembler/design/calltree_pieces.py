"""What two successive call-tree renderings share, known without reading them.

A rendering is the join of pieces (headers, the memoized text of finished
children); the next rendering mostly repeats the same piece objects and extends
the finished children's text at its end. Comparing pieces by identity tells how
long a prefix two successive renderings share, so later stages (the segmenter,
the stored versions) need not scan a long tree for it. The rendering is handed
on as a :class:`PieceText`, never joined, and an unchanged tree is the very
object of the last rendering.
"""

from __future__ import annotations

from operator import is_

from assembler.design.piece_text import PieceText

#: (new piece, the previous piece it starts with), noted by the renderer while
#: it extends a piece during one rendering
extended: list[tuple[str, str]] = []
_last: PieceText | None = None

#: Pieces this short are compared by value when they are not the same object
#: (a ``children:`` line is built anew at every rendering).
_SHORT_PIECE = 256


def joined(parts: list[str]) -> PieceText:
    """The rendering: the previous one itself when every piece is the same, else
    the pieces, with how long a prefix they share with the previous rendering."""
    global _last
    before = _last
    old = before.pieces if before is not None else ()
    # the leading pieces that are the very objects of the last rendering, at C speed
    flags = list(map(is_, parts, old))
    flags.append(False)
    first = flags.index(False)
    keep = sum(map(len, parts[:first])) + first  # each with the line break after it
    same = before is not None and len(parts) == len(old)
    for piece, was in zip(parts[first:], old[first:], strict=False):
        if piece is was or (len(piece) < _SHORT_PIECE and piece == was):
            keep += len(piece) + 1  # and the line break after it
            continue
        same = False
        if any(new is piece and prev is was for new, prev in extended):
            keep += len(was)
        break
    extended.clear()
    if same and before is not None:  # an unchanged tree is the very last rendering
        return before
    text = PieceText(tuple(parts), before, keep)
    _last = text
    return text
