"""Blocks cut into lines, counted per distinct line; a long block re-split only after its common prefix with its previous text."""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate, repeat

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
        if sums is None or prints is None:
            self.total, self.fingerprint = sum(counts), hash(text_of(text))
        else:
            # a long block is fingerprinted line by line, so a step hashes only its
            # new lines instead of the whole (possibly very long) text
            self.total, self.fingerprint = sums[-1], prints[-1]


def _chain(h: int, line: str) -> int:
    return hash((h, line))


class Segmenter:
    """Splits block texts into lines and counts tokens per distinct line.

    Counts come from ``counter`` (the shared per-encoding memo); a local
    line → count map lets a whole block be looked up with one C-level ``map``
    instead of a Python call per line, which is what keeps the call tree (new
    text at every step, mostly old lines) cheap. The last split of each block
    name is kept, so an unchanged block costs one string comparison.
    """

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._counts: dict[str, int] = {}
        self._last: dict[str, _Split] = {}

    def split(self, name: str, text: Content) -> tuple[list[str], list[int], int]:
        last = self._last.get(name)
        if last is not None and (last.text is text or last.text == text):
            return last.lines, last.counts, last.total
        if len(text) < SHORT_BLOCK:
            text = text_of(text)
            lines = text.splitlines(keepends=True) or [""]
            counts = self._counts_of(lines)
            split = self._last[name] = _Split(text, lines, counts)
            return lines, counts, split.total
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
            counts = self._counts_of(lines)
            ends = list(accumulate(map(len, lines)))
            sums = list(accumulate(counts))
            prints = list(accumulate(lines, _chain, initial=0))
            del prints[0]
            split = self._last[name] = _Split(text, lines, counts, ends, sums, prints)
            return lines, counts, split.total
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
        tail_counts = self._counts_of(tail)
        for lst in (lines, counts, ends, sums, prints):
            del lst[keep:]
        lines.extend(tail)
        counts.extend(tail_counts)
        ends.extend(accumulate(map(len, tail), initial=start))
        del ends[keep]  # accumulate's initial value
        sums.extend(accumulate(tail_counts, initial=sums[-1]))
        del sums[keep]
        prints.extend(accumulate(tail, _chain, initial=prints[-1]))
        del prints[keep]
        before = last.text
        last.__init__(text, lines, counts, ends, sums, prints)  # type: ignore[misc]
        last.kept_from, last.kept_lines = before, keep
        return lines, counts, last.total

    def _counts_of(self, lines: list[str]) -> list[int]:
        # -1 marks a line not seen yet; map and min run at C speed
        counts = list(map(self._counts.get, lines, repeat(-1, len(lines))))
        if counts and min(counts) < 0:
            self._fill(lines, counts)
        return counts

    def _fill(self, lines: list[str], counts: list[int]) -> None:
        count, known = self.counter.count, self._counts
        i = counts.index(-1)
        while True:  # jump between unseen lines with C-level index(), not a Python scan
            counts[i] = known[lines[i]] = count(lines[i])
            try:
                i = counts.index(-1, i + 1)
            except ValueError:
                return

    def tokens(self, name: str, text: Content) -> int:
        return self.split(name, text)[2]

    def measure(self, block: WireBlock) -> tuple[int, int]:
        """A block's token count and content fingerprint."""
        if block.declared_tokens is not None:
            return block.declared_tokens, hash((block.text, block.declared_tokens))
        last = self._last.get(block.name)
        if last is None or last.text is not block.content:
            self.split(block.name, block.content)
            last = self._last[block.name]
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
        self.split(block.name, block.content)
        split = self._last[block.name]
        prints = split.line_prints
        if prints is None:
            prints = split.line_prints = list(accumulate(split.lines, _chain, initial=0))[1:]
        return split.counts, prints, split.total

    def block(self, block: WireBlock) -> tuple[list[str], list[int], int]:
        """A wire block's segments; a block whose content the recording lacks is one
        segment of its declared size."""
        if block.declared_tokens is not None:
            return [block.text], [block.declared_tokens], block.declared_tokens
        return self.split(block.name, block.content)
