"""Each step of ``analyze --json`` as text, from pieces made once and kept.

The text equals ``dumps_indented(step, 2)`` of the step's JSON object (the
generic shape in ``report_json``), byte for byte; it is made without building
that object:

* a block record is one object for as long as its block holds (the engine hands
  the previous step's record back), so its text is made once and kept with it
  (the record held too, which keeps its ``id`` from being reused); a step's
  blocks are joined from kept texts;
* the layout around the values is a template made once per shape (which optional
  members a step has, its token columns), laid out by the encoder itself from a
  step whose values are markers; a step fills it with its values' JSON texts.
"""

from __future__ import annotations

import functools
import json.encoder
import math
from collections.abc import Callable, Mapping
from typing import Any

from assembler.analysis.engine import BlockAnalysis, Miss, StepAnalysis
from assembler.analysis.reports.indented_json import dumps_indented
from assembler.design.context import format_time
from assembler.design.wire import leading_same

_quote: Callable[[str], str] = json.encoder.encode_basestring


def scalar(value: object, level: int) -> str:
    """A member's JSON text as :func:`json.dumps` writes it; a container (or a float the
    encoder spells out) as :func:`dumps_indented` lays it out at ``level``."""
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is str:
        return _quote(value)  # type: ignore[arg-type]  # a str, by its type
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float) and math.isfinite(value):
        return float.__repr__(value)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, int):
        return int.__repr__(value)
    return dumps_indented(value, level)


def _marker(i: int) -> str:
    return f"\x00{i}\x00"


def _template(shape: Mapping[str, Any], level: int) -> str:
    """``shape`` (values: markers, in order) laid out at ``level``, each marker's
    place a ``%s`` in order; any other ``%`` doubled."""
    text = dumps_indented(shape, level).replace("%", "%%")
    i = 0
    while (quoted := _quote(_marker(i))) in text:
        text = text.replace(quoted, "%s", 1)
        i += 1
    return text


class _Markers:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return _marker(self.n - 1)


_BLOCKS = "\x01blocks\x01"  # where a step's blocks go: the template is cut there


@functools.lru_cache(maxsize=64)  # a few shapes per session, the same in the next one
def _step_template(
    platform: bool, ttl: bool, priced_as: bool, tokens: tuple[str, ...], warnings: bool
) -> tuple[str, str]:
    """The step's text before its blocks and after them."""
    m = _Markers()
    shape: dict[str, Any] = {
        "step": m(),
        "label": m(),
        "function": m(),
        "call_path": m(),
        "depth": m(),
        "timestamp": m(),
        "model": m(),
    }
    if platform:
        shape["platform"] = m()
    if ttl:
        shape["write_ttl"] = m()
    if priced_as:
        shape["priced_as"] = m()
    shape["tokens"] = {name: m() for name in tokens}
    shape["cache"] = {
        "read": m(),
        "write": m(),
        "uncached": m(),
        "hit_ratio": m(),
        "cached_prefix_tokens": m(),
    }
    shape["miss"] = m()
    shape["cost"] = {"usd": m(), "usd_without_cache": m()}
    shape["blocks"] = _BLOCKS
    shape["measured"] = m()
    shape["provider_diagnostic"] = m()
    shape["inferred"] = m()
    if warnings:
        shape["warnings"] = m()
    shape["measured_check"] = m()
    head, tail = _template(shape, 2).split(_quote(_BLOCKS))
    return head, tail


_BLOCK_TEMPLATE = _template(
    dict(
        zip(
            ("name", "layer", "section", "tokens", "cache", "change", "breakpoint"),
            map(_marker, range(7)),
            strict=True,
        )
    ),
    4,
)
# a step's miss, in this order, in both JSON writers
MISS_FIELDS = ("component", "layer", "reason", "tokens_lost", "sentence", "cause")
_MISS_TEMPLATE = _template(
    dict(zip(MISS_FIELDS, map(_marker, range(len(MISS_FIELDS))), strict=True)), 3
)
_BLOCK_SEPARATOR = ",\n        "  # before each of a step's blocks but the first (level 4)
#: The members of a step's ``measured_check`` (``measured_check_json``), in order.
CHECK_FIELDS = (
    "simulated",
    "measured",
    "agree",
    "reason",
    "sentence",
    "read_end",
    "read_error",
    "granularity",
    "changed_block",
)
_READ_END_FIELDS = ("simulated", "measured")
_check_markers = _Markers()
_CHECK_TEMPLATE = _template(
    {
        key: {side: _check_markers() for side in _READ_END_FIELDS}
        if key == "read_end"
        else _check_markers()
        for key in CHECK_FIELDS
    },
    3,
)
# a list of objects at level 3, as dumps_indented lays it out: its items at level 4
_INFERRED_OPEN, _INFERRED_SEPARATOR, _INFERRED_CLOSE = "[\n        ", ",\n        ", "\n      ]"


class StepText:
    """``add(step, out)``: one step's JSON text, in pieces.

    ``rare(step)`` gives the generic object's members a step seldom has (measured
    usage, the provider's diagnostic, inferred sizes, warnings);
    ``check(step)`` its measured check's object, or None.
    """

    def __init__(
        self,
        rare: Callable[[StepAnalysis], Mapping[str, Any]],
        check: Callable[[StepAnalysis], object],
    ) -> None:
        self._rare = rare
        self._check = check
        self._blocks: dict[int, tuple[BlockAnalysis, str]] = {}
        self._contents: dict[tuple[object, ...], str] = {}
        self._paths: dict[tuple[str, ...], str] = {}
        self._inferred: dict[tuple[str, int], str] = {}
        self._last_blocks: tuple[BlockAnalysis, ...] = ()
        self._last_texts: list[str] = []

    def _block(self, b: BlockAnalysis) -> str:
        kept = self._blocks.get(id(b))
        if kept is None:
            name, layer, section, tokens = b.name, b.layer, b.section, b.tokens
            cache, change, mark = b.cache, b.change, b.breakpoint
            if (
                type(name) is str
                and type(layer) is str
                and type(section) is str
                and type(tokens) is int
                and type(cache) is str
                and type(change) is str
                and (mark is None or type(mark) is int)
            ):  # the usual types (not a subclass, not a bool for an int): spelled here,
                # once per content (a block back in an earlier state is a new record)
                content = (name, layer, section, tokens, cache, change, mark)
                text = self._contents.get(content)
                if text is None:
                    q = _quote
                    text = self._contents[content] = _BLOCK_TEMPLATE % (
                        q(name),
                        q(layer),
                        q(section),
                        tokens,
                        q(cache),
                        q(change),
                        "null" if mark is None else mark,
                    )
            else:
                values = (name, layer, section, tokens, cache, change, mark)
                text = _BLOCK_TEMPLATE % tuple(scalar(x, 5) for x in values)
            kept = self._blocks[id(b)] = (b, _BLOCK_SEPARATOR + text)
        return kept[1]

    def _block_texts(self, blocks: tuple[BlockAnalysis, ...]) -> list[str]:
        """The blocks' texts, each after a separator; those the previous step had in
        the same leading places (the very same records) are taken from its list."""
        k = leading_same(blocks, self._last_blocks)
        block = self._block
        texts = self._last_texts[:k] + [block(b) for b in blocks[k:]]
        self._last_blocks, self._last_texts = blocks, texts
        return texts

    def _miss(self, m: Miss) -> str:
        return _MISS_TEMPLATE % tuple(scalar(getattr(m, name), 4) for name in MISS_FIELDS)

    def _inferred_text(self, inferred: tuple[tuple[str, int], ...]) -> str:
        """The step's ``inferred`` list, as ``scalar`` writes it at level 3, from one kept
        text per (block, tokens): a recorded session infers the same few blocks step after
        step (the 221-request session: 9 a step, 2,087 in all, 40 distinct)."""
        if not inferred:
            return "[]"
        texts = self._inferred
        items: list[str] = []
        for name, tokens in inferred:
            if type(name) is str and type(tokens) is int:  # by type: True is 1 as a key
                text = texts.get((name, tokens))
                if text is None:
                    item = {"block": name, "tokens": tokens}
                    text = texts[name, tokens] = dumps_indented(item, 4)
            else:
                text = dumps_indented({"block": name, "tokens": tokens}, 4)
            items.append(text)
        return _INFERRED_OPEN + _INFERRED_SEPARATOR.join(items) + _INFERRED_CLOSE

    def _call_path(self, path: tuple[str, ...]) -> str:
        text = self._paths.get(path)
        if text is None:
            text = self._paths[path] = dumps_indented(list(path), 3)
        return text

    def add(self, s: StepAnalysis, out: list[str]) -> None:
        """Append the step's text to ``out`` in pieces: the blocks' kept texts are
        copied once, when ``out`` is joined."""
        v = scalar
        platform = bool(s.platform) and s.platform != s.provider
        tokens = s.tokens
        template = _step_template(
            platform, bool(s.write_ttl), bool(s.price_context), tuple(tokens), bool(s.warnings)
        )
        plain = s.measured is None and s.diagnostic is None and not s.inferred
        rare = {} if plain and not s.warnings else self._rare(s)
        # an int is written by ``%s`` as the encoder writes it: handed over as is
        values: list[object] = [
            _int(s.step, 3),
            v(s.label, 3),
            v(s.function, 3),
            self._call_path(s.call_path),
            _int(s.depth, 3),
            _quote(format_time(s.timestamp)),
            v(s.model, 3),
        ]
        if platform:
            values.append(v(s.platform, 3))
        if s.write_ttl:
            values.append(v(s.write_ttl, 3))
        if s.price_context:
            values.append(v(dict(s.price_context), 3))
        values += [_int(n, 4) for n in tokens.values()]
        values += (
            _int(s.read, 4),
            _int(s.write, 4),
            _int(s.uncached, 4),
            v(round(s.hit_ratio, 6), 4),
            _int(s.cached_prefix_tokens, 4),
            "null" if s.miss is None else self._miss(s.miss),
            v(round(s.usd, 8), 4),
            v(round(s.usd_without_cache, 8), 4),
        )
        head, tail = template
        texts = self._block_texts(s.blocks)
        if texts:  # the first block without its separator's comma
            out.append(head % tuple(values) + "[" + texts[0][1:])
            out += texts[1:]
            out.append("\n      ]")
        else:
            out.append(head % tuple(values) + "[]")
        if rare:
            after = [v(rare["measured"], 3), v(rare["provider_diagnostic"], 3)]
            after.append(self._inferred_text(s.inferred))  # rare["inferred"], spelled
            if s.warnings:
                after.append(v(rare["warnings"], 3))
        else:
            after = ["null", "null", "[]"]
        check = self._check(s)
        after.append("null" if check is None else _check_text(check))
        out.append(tail % tuple(after))


def _check_text(check: object) -> str:
    """A step's ``measured_check`` object as ``scalar`` writes it at level 3: its members
    spelled into a template when it has the usual members, in order."""
    if type(check) is dict and tuple(check) == CHECK_FIELDS:
        end = check["read_end"]
        if type(end) is dict and tuple(end) == _READ_END_FIELDS:
            values = [scalar(value, 4) for key, value in check.items() if key != "read_end"]
            values[5:5] = (scalar(end["simulated"], 5), scalar(end["measured"], 5))
            return _CHECK_TEMPLATE % tuple(values)
    return scalar(check, 3)


def _int(value: object, level: int) -> object:
    """An int as is (``%s`` writes it as the encoder does), anything else as its text."""
    return value if type(value) is int else scalar(value, level)
