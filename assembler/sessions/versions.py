"""Every version of a growing text, kept as deltas against the version before.

The call tree is re-rendered at every step and grows at its tail, so a long
session's analysis would otherwise hold thousands of near-identical copies
(hundreds of megabytes at 5,000 steps). A version is stored as "the first
``keep`` characters of the previous version, then ``tail``". A full copy is
taken only once the tails since the last one add up to the text's own length,
so the store grows with the characters that changed (a full copy every N
versions would grow with N × length, quadratic in a growing text), and reading
a version back costs one walk over the deltas since its full copy plus one
join, about the length of the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assembler.design.piece_text import Content, shared_prefix, tail_of, text_of

#: Texts shorter than this are stored as they are: a delta would not pay.
SMALL = 4096


def common_prefix(a: Content, b: Content) -> int:
    """The length of the common prefix of ``a`` and ``b``; for two successive
    call-tree renderings, the part of it the renderer knows they share (no
    scan: every use here only needs a prefix both texts truly share).

    Texts that differ near their tail are the common case, so the search gallops
    back from the end (a short look at each candidate's last characters rejects
    most misses before one full comparison), then narrows the last gap by
    bisection over short slices.
    """
    last = _last_pair
    if last[0] is a and last[1] is b:
        return last[2]
    known = shared_prefix(a, b)
    if known is not None:  # two successive call-tree renderings: no scan needed
        _remember(a, b, known)
        return known
    cut = _scanned(text_of(a), text_of(b))
    _remember(a, b, cut)
    return cut


def _scanned(a: str, b: str) -> int:
    n = min(len(a), len(b))
    back, cut, hi = 0, n, n
    while True:
        cut = n - back
        if cut <= 0:
            cut = 0
            break
        lo = max(0, cut - 64)
        if a[lo:cut] == b[lo:cut] and b.startswith(a if cut == len(a) else a[:cut]):
            break
        hi = cut  # the texts differ before hi
        back = back * 8 if back else 256
    return narrow(a, b, cut, hi)


def narrow(a: Sequence[object], b: Sequence[object], lo: int, hi: int) -> int:
    """The common prefix length of ``a`` and ``b`` (texts or lists), knowing that
    ``a[:lo] == b[:lo]`` and, unless ``hi`` is where one of them ends,
    ``a[:hi] != b[:hi]``: bisection over slices, compared at C speed."""
    if hi == lo or (hi == min(len(a), len(b)) and a[lo:hi] == b[lo:hi]):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


# The cache engine and the analysis both ask for the same pair (a block's previous
# and new text) in one step: the second asks for free.
_last_pair: tuple[Content, Content, int] = ("", "", 0)


def _remember(a: Content, b: Content, n: int) -> None:
    global _last_pair
    _last_pair = (a, b, n)


class TextVersions:
    """An append-only sequence of text versions; :meth:`add` returns a handle."""

    def __init__(self, full_every: int | None = None) -> None:
        self.full_every = full_every  # also a full copy after this many deltas (None: never)
        # per version: (keep, tail); keep < 0 marks a full copy held in tail
        self._deltas: list[tuple[int, str]] = []
        self._last: Content = ""
        self._since_full = 0  # deltas since the last full copy
        self._tail_chars = 0  # characters in them

    def add(self, text: Content) -> StoredText | str:
        """Keep ``text`` as the next version; a short text is returned as itself."""
        if len(text) < SMALL:
            return text_of(text)
        keep = common_prefix(self._last, text) if self._deltas else 0
        return self._add(text, keep)

    def _add(self, text: Content, keep: int) -> StoredText:
        tail = len(text) - keep
        if (
            not keep
            or self._tail_chars + tail > len(text)
            or (self.full_every is not None and self._since_full >= self.full_every)
        ):
            self._deltas.append((-1, text_of(text)))
            self._since_full = self._tail_chars = 0
        else:
            self._deltas.append((keep, tail_of(text, keep)))
            self._since_full += 1
            self._tail_chars += tail
        self._last = text
        return StoredText(self, len(self._deltas) - 1)

    def text(self, version: int) -> str:
        if version == len(self._deltas) - 1:
            return text_of(self._last)
        # walk back to the full copy, keeping of each tail only what survives
        deltas = self._deltas
        keep, tail = deltas[version]
        pieces = [tail]
        limit = keep
        i = version - 1
        while keep >= 0:
            keep, tail = deltas[i]
            if keep < 0:
                pieces.append(tail[:limit])
            elif limit > keep:
                pieces.append(tail[: limit - keep])
                limit = keep
            i -= 1
        if len(pieces) == 1:
            return pieces[0]
        return "".join(reversed(pieces))

    def __len__(self) -> int:
        return len(self._deltas)


@dataclass(frozen=True, eq=False, slots=True)
class StoredText:
    """One version of a :class:`TextVersions`, read back on demand."""

    versions: TextVersions
    version: int

    def text(self) -> str:
        return self.versions.text(self.version)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StoredText):
            return NotImplemented
        return self.text() == other.text()

    def __hash__(self) -> int:
        return hash(self.text())


def read(stored: StoredText | str) -> str:
    """The text behind a stored value."""
    return stored if isinstance(stored, str) else stored.text()
