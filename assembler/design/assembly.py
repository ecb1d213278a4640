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


def _run(component: ContextComponent, ctx: Context) -> BlockRecord:
    text: Content | None = None
    error: str | None = None
    try:
        if not component.condition(ctx):
            status = BlockStatus.CONDITION_FALSE
        else:
            built = component.build(ctx)
            if built is None:
                status = BlockStatus.EMPTY
            elif isinstance(built, PieceText):  # a text kept as its pieces (the call tree)
                status, text = BlockStatus.EMITTED, built
            elif not isinstance(built, str):
                status = BlockStatus.ERROR
                error = f"build returned {type(built).__name__}, not str"
            elif not built or built.isspace():  # no copy of a long text, unlike strip()
                status = BlockStatus.EMPTY
            else:
                status, text = BlockStatus.EMITTED, built
    except Exception as exc:  # a feature's bug is shown on its record, never hidden
        status, error = BlockStatus.ERROR, f"{type(exc).__name__}: {exc}"
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


def assemble(registry: Registry, ctx: Context) -> Assembly:
    """Build every component of ``registry`` against ``ctx``; records in wire order.

    Per layer: collect, sort by ``(order, name)``, filter by condition, build.
    A ``profile_only`` component's record is reused while the profile is the
    same object, since nothing else it reads can have changed.
    """
    by_name: dict[str, BlockRecord] = {}
    memo = registry.profile_records
    for layer in Layer:
        for component in registry.layer_view(layer):
            if component.profile_only:
                kept = memo.get(component.name)
                if kept is not None and kept[0] is ctx.profile and kept[1] is component:
                    by_name[component.name] = kept[2]
                    continue
                result = _run(component, ctx)
                memo[component.name] = (ctx.profile, component, result)
                by_name[component.name] = result
            else:
                by_name[component.name] = _run(component, ctx)
    return Assembly(tuple(by_name[c.name] for c in registry))
