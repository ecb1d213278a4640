"""One step from recorded event to request: replay → assemble → wire."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from assembler.analysis.engine.layouts import Layout, builtin_layout
from assembler.design.assembly import Assembly, assemble
from assembler.design.blocks import BlockRecord, BlockStatus
from assembler.design.calltree_view import TreeRow, tree_rows
from assembler.design.components import default_registry
from assembler.design.context import Context, Profile
from assembler.design.registry import Registry
from assembler.design.wire import Wire, WireBlock, WireBuilder, leading_same
from assembler.errors import UsageError
from assembler.sessions.model import RecordedBlock, RequestResolver, Session
from assembler.sessions.recorded import RecordedWires
from assembler.sessions.replay import Step, iter_steps, tree_options


def recorded_assembly(wire: Wire) -> Assembly:
    """Records for a replayed request: every block emitted, as sent."""
    return RecordedAssemblies().build(wire)


class RecordedAssemblies:
    """:func:`recorded_assembly` for one session's requests in order: a wire block that is
    the very object it was at the same place in the request before (:class:`RecordedWires`
    keeps those) keeps its record, so a request costs its new blocks, not all of them."""

    def __init__(self) -> None:
        self._blocks: tuple[WireBlock, ...] = ()
        self._records: tuple[BlockRecord, ...] = ()

    def build(self, wire: Wire) -> Assembly:
        blocks = wire.blocks
        same = leading_same(blocks, self._blocks)
        records = self._records[:same] + tuple(
            BlockRecord(
                name=b.name,
                layer=b.layer,
                order=i,
                status=BlockStatus.EMITTED,
                placement=b.placement,
                cacheable=b.cacheable,
                content=b.content,
            )
            for i, b in enumerate(blocks[same:], same)
        )
        self._blocks, self._records = blocks, records
        return Assembly(records)


@dataclass(frozen=True)
class AssembledStep:
    step: Step
    assembly: Assembly
    wire: Wire
    recorded: tuple[RecordedBlock, ...] = ()  # a replayed request's blocks, resolved once


def _family(provider: str) -> str:
    # imported here: the simulators behind it load only with an analysis (import time)
    from assembler.cache.providers import normalize_provider

    try:
        return normalize_provider(provider)
    except UsageError:
        return provider.lower()


def runs_as_recorded(session: Session, provider: str | None, model: str | None) -> bool:
    """Whether an analysis at ``provider``/``model`` is the session's own provider and model
    (another name of the provider counts): only then is its measured usage a bill to show."""
    same_provider = provider is None or _family(provider) == _family(session.profile.provider)
    return same_provider and (model is None or model == session.profile.model)


def on_model(profile: Profile, provider: str | None, model: str | None) -> Profile:
    """``profile`` as if the session ran on ``provider``/``model``: what the model-guidance
    and bindings components read (design §4, L0 4: guidance depends on the provider)."""
    if provider is None or _family(provider) == _family(profile.provider):
        provider = profile.provider  # the same provider by another name: as recorded
    model = model or profile.model
    if provider == profile.provider and model == profile.model:
        return profile
    bindings = profile.bindings
    if bindings is not None:
        # the recorded form: "provider:model" (the design's example) or the model alone
        named = f"{provider}:{model}" if ":" in bindings.model else model
        bindings = replace(bindings, model=named)
    return replace(profile, provider=provider, model=model, bindings=bindings)


class SessionAssembler:
    """Assembles every step of one session under one layout.

    ``provider``/``model``, when given, are what every step is assembled for (a what-if:
    the session re-run on another model); each step's own ``context`` stays as recorded.
    """

    def __init__(
        self,
        session: Session,
        layout: Layout | None = None,
        registry: Registry | None = None,
        *,
        provider: str | None = None,
        model: str | None = None,
    ) -> None:
        self.session = session
        self.layout = layout or builtin_layout("seed")
        self.registry = self.layout.apply(registry if registry is not None else default_registry())
        self.options = self.layout.tree_options(tree_options(session))
        self.wire_builder = WireBuilder(self.layout.breakpoints, self.layout.breakpoint_ttl)
        self.recorded = RecordedWires()  # recorded requests keep their unchanged blocks
        self.recorded_records = RecordedAssemblies()  # and their records
        self.resolver = RequestResolver()  # each request's blocks from the one before
        self.provider, self.model = provider, model
        # one what-if profile per recorded one, so builds memoized per profile stay memoized
        self._profiles: tuple[Profile, Profile] | None = None

    def _context(self, context: Context) -> Context:
        if self.provider is None and self.model is None:
            return context
        known = self._profiles
        if known is None or known[0] is not context.profile:
            known = self._profiles = (
                context.profile,
                on_model(context.profile, self.provider, self.model),
            )
        return context if known[1] is known[0] else replace(context, profile=known[1])

    def steps(self) -> Iterator[Step]:
        return iter_steps(self.session, self.options)

    def assemble(self, step: Step) -> AssembledStep:
        if step.call.request is not None:
            # A recorded request is replayed as it was sent; no layout applies to it.
            blocks = self.resolver.blocks(step.call.request)
            wire = self.recorded.build(blocks)
            return AssembledStep(step, self.recorded_records.build(wire), wire, blocks)
        assembly = assemble(self.registry, self._context(step.context))
        return AssembledStep(step, assembly, self.wire_builder.build(assembly))

    def __iter__(self) -> Iterator[AssembledStep]:
        for step in self.steps():
            yield self.assemble(step)


def call_tree_rows(session: Session, number: int, layout: Layout | None = None) -> list[TreeRow]:
    """The whole recorded call tree at step ``number`` (1-based), for the inspector to draw.

    Off-path calls are included and marked (``TreeRow.struck``: failed or abandoned, drawn
    struck out; ``seen_by_model``: whether the model's ``<call_tree>`` shows the call).
    """
    steps = SessionAssembler(session, layout)
    for step in steps.steps():
        if step.number == number:
            return tree_rows(step.tree, steps.options)
    raise ValueError(f"step {number} is out of range for session {session.id!r}")
