"""Turn a recorded session into steps: one per LLM call.

Each step carries the frozen :class:`Context` the assembler builds from: the
profile as it stood (context changes applied), the clock at the call, and the
frame with its call-tree snapshot and call path.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime

from assembler.design.calltree import (
    CallNode,
    CallTreeError,
    Expose,
    LLMExchange,
    Status,
    ToolUse,
    TreeOptions,
)
from assembler.design.calltree_builder import CallTreeBuilder
from assembler.design.context import Context, Frame, Memory, Profile
from assembler.sessions.model import (
    Change,
    Enter,
    Event,
    Exit,
    FunctionSpec,
    LLMCall,
    Session,
    SessionError,
    ToolCall,
)

#: ``Step.function`` of an LLM call made outside any agentic function.
TOP_LEVEL = "(top level)"

_NO_SPEC = FunctionSpec()


# never changed once made; not frozen, as replay makes one per step (see CallNode)
@dataclass(slots=True)
class Step:
    number: int  # 1-based
    label: str | None
    function: str  # TOP_LEVEL for a call outside any agentic function
    call_path: tuple[str, ...]
    at: datetime
    depth: int
    context: Context
    call: LLMCall

    @property
    def top_level(self) -> bool:
        return self.context.frame is not None and self.context.frame.function is None

    @property
    def tree(self) -> tuple[CallNode, ...]:
        """Every top-level call as this step saw it, off-path calls included: what
        the recording holds, of which the model's tree shows the active path."""
        return self.context.frame.top_level_calls() if self.context.frame is not None else ()


def function_specs(session: Session) -> dict[str, FunctionSpec]:
    """Declared functions, completed by the doc/expose recorded on enter events."""
    specs = dict(session.functions)
    for event in session.events:
        if isinstance(event, Enter):
            known = specs.get(event.function)
            if known is None:
                known = _NO_SPEC
            doc = known.doc or (event.doc or "")
            expose = known.expose or event.expose
            if known is not _NO_SPEC and doc == known.doc and expose == known.expose:
                continue  # the usual: a function entered again adds nothing
            specs[event.function] = FunctionSpec(
                doc=doc, expose=expose, render_range=known.render_range
            )
    return specs


def tree_options(session: Session) -> TreeOptions:
    specs = function_specs(session)
    return TreeOptions(
        expose=tuple((n, s.expose) for n, s in sorted(specs.items()) if s.expose is not None),
        render_range=tuple(
            (n, s.render_range) for n, s in sorted(specs.items()) if s.render_range is not None
        ),
    )


def _apply(profile: Profile, change: Change, source: str) -> Profile:
    tools = tuple(t for t in profile.tools if t.name not in change.remove_tools)
    missing = set(change.remove_tools) - {t.name for t in profile.tools}
    if missing:
        raise SessionError(
            source,
            f"remove_tools names {sorted(missing)[0]!r}, which the session does not have",
            line=change.line,
            field=f"{change.field}.remove_tools",
        )
    names = {t.name for t in tools}
    for tool in change.add_tools:
        if tool.name in names:
            raise SessionError(
                source,
                f"add_tools adds {tool.name!r}, which the session already has",
                line=change.line,
                field=f"{change.field}.add_tools",
            )
        names.add(tool.name)
    memory: Memory = profile.memory
    if change.memory_state is not None:
        memory = replace(memory, state=change.memory_state)
    model = change.model or profile.model
    bindings = profile.bindings
    if bindings is not None and change.model:
        bindings = replace(bindings, model=change.model)
    return replace(
        profile,
        tools=tools + change.add_tools,
        memory=memory,
        provider=change.provider or profile.provider,
        model=model,
        channel=change.channel or profile.channel,
        bindings=bindings,
    )


def iter_steps(session: Session, options: TreeOptions | None = None) -> Iterator[Step]:
    """Replay ``session``; raises :class:`SessionError` naming the offending event."""
    opts = options if options is not None else tree_options(session)
    specs = function_specs(session)
    builder = CallTreeBuilder()
    profile = session.profile
    previous: datetime | None = None
    number = 0
    src = session.source
    frames: dict[int | None, tuple[str | None, tuple[str, ...], int, FunctionSpec]] = {}
    any_hidden = opts.default_expose is Expose.HIDDEN or any(
        e is Expose.HIDDEN for _, e in opts.expose
    )

    def fail(event: Event, message: str, field: str = "") -> SessionError:
        return SessionError(src, message, line=event.line, field=event.field + field)

    for event in session.events:
        if previous is not None and event.at < previous:
            raise fail(
                event,
                f"time goes backwards: {event.at.isoformat()} is before the previous event",
                ".at",
            )
        previous = event.at
        try:
            # the commonest events first; the kinds do not overlap
            if isinstance(event, LLMCall):
                call_id = builder.running_ref(event.call, "llm.call")
                where = frames.get(call_id)
                if where is None:  # a call's path never changes while it runs
                    path = builder.call_path(call_id) if call_id is not None else ()
                    # a hidden call leaves the call path as it leaves the tree (the frame stays)
                    shown = (
                        tuple(n for n in path[:-1] if not opts.hidden(n)) + path[-1:]
                        if any_hidden
                        else path
                    )
                    fn = path[-1] if path else None
                    spec = specs.get(fn, _NO_SPEC) if fn else _NO_SPEC
                    where = frames[call_id] = (fn, shown, builder.depth_of(call_id), spec)
                function, shown, depth, spec = where
                number += 1
                roots = builder.roots(call_id)
                at = event.at
                # positional: this runs once per step
                frame = Frame(
                    function,
                    spec.doc,
                    shown,
                    _own_root(roots),
                    opts,
                    event.position,
                    event.contract,
                    event.input,
                    event.output_schema,
                    event.memory_prefetch,
                    event.attachments,
                    roots if len(roots) > 1 else (),
                )
                yield Step(
                    number,
                    event.label,
                    function or TOP_LEVEL,
                    shown,
                    at,
                    depth,
                    Context(profile, at, frame),
                    event,
                )
                builder.llm_in(call_id, LLMExchange(event.input, event.output))
            elif isinstance(event, ToolCall):
                builder.tool(ToolUse(event.name, event.input, event.output), event.call)
            elif isinstance(event, Enter):
                builder.enter(
                    event.function,
                    event.input,
                    event.dispatched_by,
                    parent=event.parent,
                    ref=event.id,
                    retry_of=event.retry_of,
                )
            elif isinstance(event, Exit):
                builder.exit(
                    event.function,
                    event.output,
                    event.key_output,
                    ref=event.id,
                    outcome=event.outcome,
                    error=event.error,
                )
            elif isinstance(event, Change):
                profile = _apply(profile, event, src)
        except CallTreeError as exc:
            raise fail(event, str(exc)) from None
    if number == 0:
        raise SessionError(
            src,
            "the session has no LLM call; expected at least one event of type llm",
            field="events",
        )


def _own_root(roots: tuple[CallNode, ...]) -> CallNode | None:
    """The top-level call on the frame's path, else the latest one."""
    for r in roots:
        if r.status is Status.RUNNING and not r.detached:
            return r
    return roots[-1] if roots else None


def replay(session: Session, options: TreeOptions | None = None) -> list[Step]:
    return list(iter_steps(session, options))


def find_step(steps: list[Step], selector: str) -> Step:
    """A step by 1-based number or by label."""
    if selector.isascii() and selector.isdigit():
        n = int(selector)
        if 1 <= n <= len(steps):
            return steps[n - 1]
        raise ValueError(f"step {n} is out of range; the session has steps 1 to {len(steps)}")
    for step in steps:
        if step.label == selector:
            return step
    raise ValueError(f"no step labelled {selector!r}")
