"""A long text held as the pieces it is the line-join of, never joined on the hot path.

The call tree is re-rendered at every step and grows with the session: joining
it into one string per step copies the whole tree every time, which is
quadratic in the session's length (2 MB per step at 50,000 steps). A rendering
is instead kept as its pieces (headers, the memoized text of finished children),
most of them the very objects of the rendering before, together with how many
leading characters it is known to share with that rendering. The segmenter
and the stored versions read only what changed; the text itself is joined only
when somebody asks to see it (``str(text)``).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate, count
from typing import Union

#: What a block holds: a plain text, or a text made of shared pieces.
Content = Union[str, "PieceText"]

_serials = count()  # unique per rendering made in this process


class PieceText:
    """``"\\n".join(pieces)``, with the prefix it shares with the rendering before."""

    __slots__ = ("_ends", "_previous", "length", "pieces", "serial", "shared")

    def __init__(
        self, pieces: tuple[str, ...], previous: PieceText | None = None, shared: int = 0
    ) -> None:
        self.pieces = pieces
        self.length = sum(map(len, pieces)) + max(len(pieces) - 1, 0)
        # the rendering this one follows (by serial number, so a session's renderings do
        # not keep each other alive) and how many leading characters both are known to share
        self.serial = next(_serials)
        self._previous = previous.serial if previous is not None else -1
        self.shared = min(shared, self.length)
        self._ends: list[int] | None = None  # _ends[i]: characters up to the end of piece i

    def __str__(self) -> str:
        return "\n".join(self.pieces)

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"PieceText({len(self.pieces)} pieces, {self.length} characters)"

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, PieceText):
            if other.length != self.length:
                return False
            if len(other.pieces) == len(self.pieces) and all(
                a is b or a == b for a, b in zip(self.pieces, other.pieces, strict=True)
            ):
                return True
            return str(self) == str(other)
        if isinstance(other, str):
            return len(other) == self.length and str(self) == other
        return NotImplemented

    def __hash__(self) -> int:  # equal to the hash of the text it stands for
        return hash(str(self))

    def follows(self, before: PieceText) -> int | None:
        """How many leading characters this rendering is known to share with
        ``before`` when ``before`` is the rendering it follows; None otherwise."""
        return self.shared if self._previous == before.serial else None

    def ends(self) -> list[int]:
        if self._ends is None:
            ends = list(accumulate(len(p) + 1 for p in self.pieces))
            if ends:
                ends[-1] -= 1  # no line break after the last piece
            self._ends = ends
        return self._ends

    def tail(self, start: int) -> str:
        """``str(self)[start:]``, joining only the pieces from ``start`` on."""
        if start <= 0:
            return str(self)
        ends = self.ends()
        i = bisect_right(ends, start)  # the piece holding character ``start``
        if i >= len(self.pieces):
            return ""
        begin = ends[i - 1] if i else 0  # where piece i starts (after its line break)
        first = self.pieces[i][start - begin :]  # "" when start is the line break after it
        rest = self.pieces[i + 1 :]
        return "\n".join((first, *rest)) if rest else first


def text_of(content: Content) -> str:
    """The text itself (joined once, when a piece text)."""
    return content if isinstance(content, str) else str(content)


def shared_prefix(before: Content, after: Content) -> int | None:
    """How many leading characters ``after`` is known to share with ``before``
    without reading them: for two successive renderings, what the renderer noted;
    for two piece texts, their leading pieces that are the same objects (or short
    and equal). None when nothing is known (plain texts)."""
    if before is after:
        return len(before)
    if not isinstance(after, PieceText) or not isinstance(before, PieceText):
        return None
    known = after.follows(before)
    if known is not None:
        return known
    keep = 0
    for a, b in zip(before.pieces, after.pieces, strict=False):
        if a is not b and a != b:
            break
        keep += len(a) + 1
    return min(keep, before.length, after.length)


def tail_of(content: Content, start: int) -> str:
    """``text_of(content)[start:]``, without joining what comes before ``start``."""
    return content[start:] if isinstance(content, str) else content.tail(start)
