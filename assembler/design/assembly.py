"""Assemble a context from a registry: per layer, collect → sort → filter → build.

Every registered component yields exactly one record, whatever happened to it,
so the inspector can show what was left out and why. Nothing is swallowed.
"""

from __future__ import annotations

from dataclasses import dataclass

from assembler.design.blocks import BlockRecord, BlockStatus
from assembler.design.context import Context
from assembler.design.layers import Layer
from assembler.design.piece_text import Content, PieceText
from assembler.design.registry import ContextComponent, Registry


@dataclass(frozen=True, slots=True)
class Assembly:
    """One record per registered component, in wire order."""

    records: tuple[BlockRecord, ...]

    @property
    def emitted(self) -> tuple[BlockRecord, ...]:
        return tuple(r for r in self.records if r.status is BlockStatus.EMITTED)

    @property
    def errors(self) -> tuple[BlockRecord, ...]:
        return tuple(r for r in self.records if r.status is BlockStatus.ERROR)

    def record(self, name: str) -> BlockRecord:
        for r in self.records:
            if r.name == name:
                return r
        raise KeyError(f"no component named {name!r} in this assembly")

    def layer(self, layer: Layer) -> tuple[BlockRecord, ...]:
        return tuple(r for r in self.records if r.layer is layer)


def _outcome(
    component: ContextComponent, ctx: Context
) -> tuple[BlockStatus, Content | None, str | None]:
    """What building ``component`` against ``ctx`` gave: status, text, error."""
    try:
        if not component.condition(ctx):
            return BlockStatus.CONDITION_FALSE, None, None
        built = component.build(ctx)
        if built.__class__ is str:  # the common case first
            if not built or built.isspace():
                return BlockStatus.EMPTY, None, None
            return BlockStatus.EMITTED, built, None
        if built is None:
            return BlockStatus.EMPTY, None, None
        if isinstance(built, PieceText):  # a text kept as its pieces (the call tree)
            return BlockStatus.EMITTED, built, None
        if not isinstance(built, str):
            return BlockStatus.ERROR, None, f"build returned {type(built).__name__}, not str"
        if not built or built.isspace():  # no copy of a long text, unlike strip()
            return BlockStatus.EMPTY, None, None
        return BlockStatus.EMITTED, built, None
    except Exception as exc:  # a feature's bug is shown on its record, never hidden
        return BlockStatus.ERROR, None, f"{type(exc).__name__}: {exc}"


def _record(
    component: ContextComponent, status: BlockStatus, text: Content | None, error: str | None
) -> BlockRecord:
    return BlockRecord(
        component.name,
        component.layer,
        component.order,
        status,
        component.where,
        component.cacheable,
        text,
        error,
        component.tail and component.layer is Layer.L1,
    )


def _run(component: ContextComponent, ctx: Context) -> BlockRecord:
    return _record(component, *_outcome(component, ctx))


def assemble(registry: Registry, ctx: Context) -> Assembly:
    """Build every component of ``registry`` against ``ctx``; records in wire order.

    Per layer: collect, sort by ``(order, name)``, filter by condition, build.
    A ``profile_only`` component's record is reused while the profile is the
    same object, since nothing else it reads can have changed; any other
    component's record is reused while its build returns what it returned last
    time. So consecutive assemblies share their unchanged records, and later
    stages tell an unchanged block by identity.
    """
    memo = registry.assembly_memo
    changing: list[tuple[int, ContextComponent]] | None = memo.get("changing")
    if changing is None:  # the components that read more than the profile, by wire position
        changing = memo["changing"] = [(i, c) for i, c in enumerate(registry) if not c.profile_only]
    last: tuple[object, list[BlockRecord]] | None = memo.get("last")
    if last is None or last[0] is not ctx.profile:
        kept = registry.profile_records
        records = []
        for c in registry:  # in wire order
            hit = kept.get(c.name) if c.profile_only else None
            if hit is not None and hit[0] is ctx.profile and hit[1] is c:
                records.append(hit[2])
                continue
            records.append(_run(c, ctx))
            if c.profile_only:
                kept[c.name] = (ctx.profile, c, records[-1])
        memo["last"] = (ctx.profile, records)
        return Assembly(tuple(records))
    records = list(last[1])
    for i, c in changing:
        status, text, error = _outcome(c, ctx)
        record = records[i]
        old = record.content
        # the record already says what the build said (the same text object, or an
        # equal short text): it is handed on as is; inline, as this runs per component
        if (
            record.status is not status
            or record.error != error
            or not (old is text or (type(old) is str and type(text) is str and old == text))
        ):
            records[i] = _record(c, status, text, error)
    memo["last"] = (ctx.profile, records)
    return Assembly(tuple(records))
