"""Blocks cut into lines, counted per distinct line; a long block re-split only after its common prefix with its previous text."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from itertools import accumulate, count
from operator import xor

from assembler.cache.tokenizers import TokenCounter
from assembler.design.piece_text import Content, tail_of, text_of
from assembler.design.wire import WireBlock
from assembler.sessions.versions import common_prefix

# --- segments and token counts -------------------------------------------------------


#: Below this many characters a block is split afresh and fingerprinted by its
#: hash: cheaper than finding what it shares with its previous text.
SHORT_BLOCK = 2048


class _Split:
    """A block's text cut into lines, with its token total and content fingerprint.

    A long block also keeps running character ends, token sums and line hashes,
    so its next text can be split from where it stops sharing lines with this one.
    """

    __slots__ = (
        "counts",
        "ends",
        "fingerprint",
        "kept_from",
        "kept_lines",
        "line_prints",
        "lines",
        "prints",
        "sums",
        "text",
        "total",
    )

    def __init__(
        self,
        text: Content,
        lines: list[str],
        counts: list[int],
        ends: list[int] | None = None,  # ends[i]: characters up to and including line i
        sums: list[int] | None = None,  # sums[i]: tokens up to and including line i
        prints: list[int] | None = None,  # prints[i]: a running hash of lines 0..i
    ) -> None:
        self.text = text
        self.lines = lines
        self.counts = counts
        self.ends = ends
        self.sums = sums
        self.prints = prints
        self.line_prints = prints  # a short block's are worked out when first asked for
        self.kept_from: Content | None = None  # the previous text this split extended, if any
        self.kept_lines = 0  # how many of its leading lines it kept
        if sums is None or prints is None:  # a short block: a plain text
            self.total, self.fingerprint = sum(counts), hash(text)
        else:
            # a long block is fingerprinted line by line, so a step hashes only its
            # new lines instead of the whole (possibly very long) text
            self.total, self.fingerprint = sums[-1], prints[-1]


def _prints(lines: list[str], start: int, before: int) -> Iterator[int]:
    """The running fingerprints of ``lines`` (line ``start`` on, after ``before``): each
    line's hash salted with its position, folded in by xor. Order-sensitive through
    the positions, and worked out at C speed (no Python call per line)."""
    return accumulate(map(hash, zip(count(start), lines)), xor, initial=before)


class Segmenter:
    """Splits block texts into lines and counts tokens per distinct line.

    Counts come from ``counter`` (the shared per-encoding memo), a whole block's
    lines at a time (:meth:`TokenCounter.counts`: one C-level lookup of the known
    ones instead of a Python call per line), which is what keeps the call tree
    (new text at every step, mostly old lines) cheap. The last split of each
    block name is kept, so an unchanged block costs one string comparison.
    """

    def __init__(self, counter: TokenCounter, scale: float = 1.0) -> None:
        self.counter = counter
        # counted sizes times ``scale``: a recorded session's sizes fitted to its bill, where
        # the counter stands in for the provider's own tokenizer (declared sizes are as is)
        self.scale = scale
        self._last: dict[str, _Split] = {}

    def _scaled(self, counts: list[int]) -> list[int]:
        """``counts`` times the scale, rounded so that every running total is."""
        s = self.scale
        ends = [round(c * s) for c in accumulate(counts)]
        return [b - a for a, b in zip([0, *ends], ends, strict=False)]

    def split(self, name: str, text: Content) -> tuple[list[str], list[int], int]:
        split = self._split(name, text, self._last.get(name))
        if self.scale != 1.0:
            return split.lines, self._scaled(split.counts), round(split.total * self.scale)
        return split.lines, split.counts, split.total

    def _split(self, name: str, text: Content, last: _Split | None) -> _Split:
        """The split of ``text``, the latest of block ``name`` (``last``: its split before)."""
        if last is not None and (last.text is text or last.text == text):
            return last
        if len(text) < SHORT_BLOCK:
            if not isinstance(text, str):  # text_of, inlined
                text = str(text)
            lines = text.splitlines(keepends=True) or [""]
            split = self._last[name] = _Split(text, lines, self.counter.counts(lines))
            return split
        keep = 0
        if last is not None and last.ends is not None:
            # The call tree grows and releases at its tail: keep the lines of the
            # common prefix with this block's previous text, split only the rest.
            common = common_prefix(last.text, text)
            keep = bisect_right(last.ends, common)
            # a kept line must end where it ends in the new text: at a "\n" it does
            while keep and not last.lines[keep - 1].endswith("\n"):
                keep -= 1
        if (
            last is None
            or last.ends is None
            or last.sums is None
            or last.prints is None
            or not keep
        ):
            lines = text_of(text).splitlines(keepends=True)
            counts = self.counter.counts(lines)
            ends = list(accumulate(map(len, lines)))
            sums = list(accumulate(counts))
            prints = list(_prints(lines, 0, 0))
            del prints[0]
            split = self._last[name] = _Split(text, lines, counts, ends, sums, prints)
            return split
        # extend the previous lists in place: copying them would cost O(lines) per
        # step, and nothing holds on to a previous split
        lines, counts, ends, sums, prints = (
            last.lines,
            last.counts,
            last.ends,
            last.sums,
            last.prints,
        )
        start = ends[keep - 1]
        tail = tail_of(text, start).splitlines(keepends=True)
        tail_counts = self.counter.counts(tail)
        del lines[keep:], counts[keep:], ends[keep:], sums[keep:], prints[keep:]
        lines.extend(tail)
        counts.extend(tail_counts)
        ends.extend(accumulate(map(len, tail), initial=start))
        del ends[keep]  # accumulate's initial value
        sums.extend(accumulate(tail_counts, initial=sums[-1]))
        del sums[keep]
        prints.extend(_prints(tail, keep, prints[-1]))
        del prints[keep]
        # the same lists, extended: what __init__ works out from them, set directly
        last.kept_from, last.kept_lines = last.text, keep
        last.text, last.total, last.fingerprint = text, sums[-1], prints[-1]
        return last

    def tokens(self, name: str, text: Content) -> int:
        return self.split(name, text)[2]

    def measure(self, block: WireBlock) -> tuple[int, int]:
        """A block's token count and content fingerprint."""
        if block.declared_tokens is not None:
            return block.declared_tokens, hash((block.text, block.declared_tokens))
        content = block.content
        last = self._last.get(block.name)
        if last is None or last.text is not content:
            last = self._split(block.name, content, last)
        if self.scale != 1.0:
            return round(last.total * self.scale), last.fingerprint
        return last.total, last.fingerprint

    def kept_lines(self, block: WireBlock, before: Content) -> int:
        """How many leading lines ``block`` shares with ``before``, when its split
        was made by extending a split of ``before`` (0 when that is not known)."""
        split = self._last.get(block.name)
        if split is None or split.text is not block.content or split.kept_from is not before:
            return 0
        return split.kept_lines

    def segments(self, block: WireBlock) -> tuple[list[int], list[int], int]:
        """A wire block's token count per line, the running hash of its lines (entry
        ``i`` identifies lines ``0..i``) and its total; a block whose content the
        recording lacks is one segment of its declared size."""
        if block.declared_tokens is not None:
            n = block.declared_tokens
            return [n], [hash((block.text, n))], n
        split = self._split(block.name, block.content, self._last.get(block.name))
        prints = split.line_prints
        if prints is None:
            prints = split.line_prints = list(_prints(split.lines, 0, 0))[1:]
        if self.scale != 1.0:
            return self._scaled(split.counts), prints, round(split.total * self.scale)
        return split.counts, prints, split.total

    def block(self, block: WireBlock) -> tuple[list[str], list[int], int]:
        """A wire block's segments; a block whose content the recording lacks is one
        segment of its declared size."""
        if block.declared_tokens is not None:
            return [block.text], [block.declared_tokens], block.declared_tokens
        return self.split(block.name, block.content)
