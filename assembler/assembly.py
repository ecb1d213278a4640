"""Assemble a context from a registry: per layer, collect → sort → filter → build.

Every registered component yields exactly one record, whatever happened to it,
so the inspector can show what was left out and why. Nothing is swallowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from assembler.context import Context
from assembler.layers import Layer, Placement, wire_section
from assembler.registry import ContextComponent, Registry


class BlockStatus(StrEnum):
    EMITTED = "emitted"
    CONDITION_FALSE = "condition_false"
    EMPTY = "empty"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class BlockRecord:
    """What one component did in one assembly."""

    name: str
    layer: Layer
    order: int
    status: BlockStatus
    placement: Placement
    cacheable: bool
    text: str | None = None
    error: str | None = None

    @property
    def section(self) -> str:
        """tools, system or messages."""
        return wire_section(self.placement)


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
    def record(
        status: BlockStatus, text: str | None = None, error: str | None = None
    ) -> BlockRecord:
        return BlockRecord(
            name=component.name,
            layer=component.layer,
            order=component.order,
            status=status,
            placement=component.where,
            cacheable=component.cacheable,
            text=text,
            error=error,
        )

    try:
        if not component.condition(ctx):
            return record(BlockStatus.CONDITION_FALSE)
        text = component.build(ctx)
    except Exception as exc:  # a feature's bug is shown on its record, never hidden
        return record(BlockStatus.ERROR, error=f"{type(exc).__name__}: {exc}")
    if text is None:
        return record(BlockStatus.EMPTY)
    if not isinstance(text, str):
        return record(BlockStatus.ERROR, error=f"build returned {type(text).__name__}, not str")
    if not text.strip():
        return record(BlockStatus.EMPTY)
    return record(BlockStatus.EMITTED, text=text)


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
