"""Builds the call tree event by event and hands out frozen snapshots.

Calls nest like a stack, with three widenings of the session format:

- several calls may run at once under one parent (parallel children); each
  keeps the slot it took when it started, so siblings stay in start order;
- a call may end ``failed`` or ``abandoned``, unwinding whatever still runs
  inside it; it stays in the recording but leaves every active path;
- calls and LLM calls may happen at the top level, outside any call, and a new
  top-level call may start after another finished.

Finished subtrees are immutable and shared between snapshots, so a snapshot at
an LLM call costs only the active path, not the number of calls made so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assembler.design.calltree import (
    CallNode,
    CallTreeError,
    LLMExchange,
    Outcome,
    SharedPrefix,
    Status,
    ToolUse,
)

# A child slot: the finished node, or the call_id of a call still running.
_Slot = CallNode | int


@dataclass
class _OpenCall:
    call_id: int
    function: str
    input: str | None
    parent: int | None
    ref: str | None = None
    retry_of: int | None = None
    slots: list[_Slot] = field(default_factory=list)
    llm: list[LLMExchange] = field(default_factory=list)
    tools: list[ToolUse] = field(default_factory=list)
    # the leading run of finished slots: slots only ever finish or are appended, so
    # the run only grows at its end, and every snapshot shares this one list
    head: list[CallNode] = field(default_factory=list)
    # the snapshot views last handed out, reused until their list changes (then None)
    kids_view: SharedPrefix[CallNode] | None = None
    llm_view: SharedPrefix[LLMExchange] | None = None
    tools_view: SharedPrefix[ToolUse] | None = None
    running_kids: int = 0  # calls started inside this one that still run

    def finished_head(self) -> list[CallNode]:
        slots, head = self.slots, self.head
        n = len(head)
        while n < len(slots):
            slot = slots[n]
            if not isinstance(slot, CallNode):
                break
            head.append(slot)
            n += 1
        return head


@dataclass(frozen=True)
class _CallInfo:
    function: str
    called_by: int | None


def _slot_index(slots: list[_Slot], call_id: int) -> int:
    # from the end: the call finishing is almost always the latest one started
    for i in range(len(slots) - 1, -1, -1):
        slot = slots[i]
        if isinstance(slot, int) and slot == call_id:
            return i
    raise AssertionError(f"call {call_id} holds no slot")


class CallTreeBuilder:
    """The recorded calls so far: finished nodes, and the calls still running."""

    def __init__(self) -> None:
        self._open: dict[int, _OpenCall] = {}
        self._roots: list[_Slot] = []
        self._info: dict[int, _CallInfo] = {}
        self._refs: dict[str, int] = {}
        self._finished: dict[int, CallNode] = {}
        self._next_id = 1
        self._leaf_list: list[_OpenCall] | None = None
        # per running call, dropped when it ends: its path from the top, its stub
        self._chains: dict[int, tuple[_OpenCall, ...]] = {}
        self._stubs: dict[int, CallNode] = {}
        self._root_done: tuple[CallNode, ...] = ()

    # --- which call an event belongs to -------------------------------------------------

    def _leaves(self) -> list[_OpenCall]:
        """Running calls with no running call inside them, in start order (kept until a
        call starts or ends: every event asks, most events do neither)."""
        if self._leaf_list is None:
            self._leaf_list = [c for c in self._open.values() if not c.running_kids]
        return self._leaf_list

    def _label(self, call: _OpenCall) -> str:
        return call.ref or f"{call.function}#{call.call_id}"

    def _target(self, ref: str | None, what: str) -> _OpenCall | None:
        """The running call named by ``ref``, else the one innermost running call."""
        if ref is not None:
            call_id = self._refs.get(ref)
            if call_id is None or call_id not in self._open:
                state = "has finished" if call_id is not None else "was never entered"
                raise CallTreeError(f"{what} names call {ref!r}, which {state}")
            return self._open[call_id]
        leaves = self._leaves()
        if len(leaves) > 1:
            names = ", ".join(self._label(c) for c in leaves)
            raise CallTreeError(f"several calls are running ({names}); {what} must name one")
        return leaves[0] if leaves else None

    @property
    def depth(self) -> int:
        """Calls on the default frame's path (0 at the top level)."""
        default = self._default()
        return self.depth_of(default.call_id if default else None)

    def depth_of(self, call_id: int | None) -> int:
        """Running calls from the top level down to ``call_id``, itself included."""
        call = self._open.get(call_id) if call_id is not None else None
        depth = 0
        while call is not None:
            depth += 1
            call = self._open.get(call.parent) if call.parent is not None else None
        return depth

    def _default(self) -> _OpenCall | None:
        leaves = self._leaves()
        return leaves[-1] if leaves else None

    @property
    def current(self) -> str | None:
        """The function of the innermost running call (the latest one if several run)."""
        call = self._default()
        return call.function if call else None

    @property
    def root(self) -> CallNode | None:
        """The first top-level call once it has finished (a one-root session's tree)."""
        first = self._roots[0] if self._roots else None
        return first if isinstance(first, CallNode) else None

    def running_ref(self, ref: str | None, what: str) -> int | None:
        """The call_id an event runs in (None: the top level); errors name the ambiguity."""
        call = self._target(ref, what)
        return call.call_id if call else None

    # --- events ---------------------------------------------------------------------------

    def enter(
        self,
        function: str,
        input: str | None,
        dispatched_by: str | None = None,
        *,
        parent: str | None = None,
        ref: str | None = None,
        retry_of: str | None = None,
    ) -> int:
        if ref is not None and ref in self._refs:
            raise CallTreeError(f"call id {ref!r} is already used")
        host = self._target(parent, "enter.parent") if parent or self._open else None
        called_by = host.call_id if host else None
        siblings = host.slots if host else self._roots
        if dispatched_by is not None:
            decision = next(
                (
                    c
                    for c in reversed(siblings)
                    if isinstance(c, CallNode) and c.function == dispatched_by and not c.off_path
                ),
                None,
            )
            if decision is None:
                inside = f"inside {host.function!r}" if host else "at the top level"
                raise CallTreeError(
                    f"{function!r} names dispatched_by {dispatched_by!r}, but no finished call "
                    f"of that name precedes it {inside}"
                )
            called_by = decision.call_id
        retried: int | None = None
        if retry_of is not None:
            retried = self._refs.get(retry_of)
            done = self._finished.get(retried) if retried is not None else None
            if done is None or not done.off_path:
                raise CallTreeError(
                    f"{function!r} names retry_of {retry_of!r}, which is not a call that "
                    "ended failed or abandoned"
                )
        call_id = self._next_id
        self._next_id += 1
        self._info[call_id] = _CallInfo(function, called_by)
        if ref is not None:
            self._refs[ref] = call_id
        self._leaf_list = None
        self._open[call_id] = _OpenCall(
            call_id, function, input, host.call_id if host else None, ref, retried
        )
        siblings.append(call_id)  # the slot is taken now: siblings stay in start order
        if host is not None:
            host.kids_view = None
            host.running_kids += 1
        return call_id

    def exit(
        self,
        function: str,
        output: str | None,
        key_output: str | None = None,
        *,
        ref: str | None = None,
        outcome: Outcome = Outcome.OK,
        error: str | None = None,
    ) -> CallNode:
        if not self._open:
            raise CallTreeError(f"exit from {function!r} but no call is running")
        call = self._target(ref, "exit.id")
        assert call is not None
        if call.function != function and ref is None and outcome is not Outcome.OK:
            # a failure unwinds: the nearest running call of that name, and all inside it
            up: _OpenCall | None = call
            while up is not None and up.function != function:
                up = self._open.get(up.parent) if up.parent is not None else None
            call = up or call
        if call.function != function:
            raise CallTreeError(f"exit from {function!r} but the running call is {call.function!r}")
        # usually nothing runs inside the call that ends: then no ancestry walk (quadratic)
        kids = call.running_kids
        inside = [c for c in self._open.values() if self._within(c, call.call_id)] if kids else []
        if inside and outcome is Outcome.OK:
            names = ", ".join(self._label(c) for c in inside)
            raise CallTreeError(
                f"exit from {function!r} while calls inside it still run ({names}); "
                "end them first, or end this call failed or abandoned"
            )
        for c in reversed(inside):  # innermost first, so each parent sees its children done
            self._close(c, None, None, outcome, None)
        return self._close(call, output, key_output, outcome, error)

    def _within(self, call: _OpenCall, ancestor: int) -> bool:
        parent = call.parent
        while parent is not None:
            if parent == ancestor:
                return True
            parent = self._open[parent].parent
        return False

    def _close(
        self,
        call: _OpenCall,
        output: str | None,
        key_output: str | None,
        outcome: Outcome,
        error: str | None,
    ) -> CallNode:
        del self._open[call.call_id]
        self._chains.pop(call.call_id, None)
        self._stubs.pop(call.call_id, None)
        self._leaf_list = None
        node = CallNode(  # positional: one per call
            call.call_id,
            call.function,
            Status.DONE,
            call.input,
            output,
            key_output,
            tuple(s for s in call.slots if isinstance(s, CallNode)),
            tuple(call.llm),
            tuple(call.tools),
            outcome,
            error,
            call.retry_of,
            call.ref,
        )
        self._finished[call.call_id] = node
        parent = self._open[call.parent] if call.parent is not None else None
        slots = parent.slots if parent is not None else self._roots
        slots[_slot_index(slots, call.call_id)] = node
        if parent is not None:
            parent.kids_view = None
            parent.running_kids -= 1
        return node

    def llm(self, exchange: LLMExchange, ref: str | None = None) -> None:
        """Record an exchange on its call; a top-level exchange belongs to no call."""
        call = self._target(ref, "llm.call")
        if call is not None:
            call.llm.append(exchange)
            call.llm_view = None

    def llm_in(self, call_id: int | None, exchange: LLMExchange) -> None:
        """:meth:`llm` in the call ``running_ref`` gave, no call started or ended since."""
        if call_id is not None:
            call = self._open[call_id]
            call.llm.append(exchange)
            call.llm_view = None

    def tool(self, use: ToolUse, ref: str | None = None) -> None:
        call = self._target(ref, "tool.call")
        if call is None:
            raise CallTreeError(f"tool call {use.name!r} outside any agentic function")
        call.tools.append(use)
        call.tools_view = None

    # --- snapshots ------------------------------------------------------------------------

    def call_path(self, call_id: int | None = None) -> tuple[str, ...]:
        """Names along the called-by chain, root first, ending at the frame's call."""
        if call_id is None:
            default = self._default()
            if default is None:
                return ()
            call_id = default.call_id
        names: list[str] = []
        at: int | None = call_id
        while at is not None:
            info = self._info[at]
            names.append(info.function)
            at = info.called_by
        return tuple(reversed(names))

    def roots(self, call_id: int | None = None) -> tuple[CallNode, ...]:
        """Every top-level call in start order, as seen from the frame ``call_id``.

        The frame's path is running and fully built; a running call beside it is a
        ``detached`` stub (function and input only). Without ``call_id``: the
        default frame (the innermost running call), or the top level.
        """
        if call_id is None:
            default = self._default()
            call_id = default.call_id if default else None
        chain = self._chain(call_id) if call_id is not None else ()
        top = self._path_node(chain) if chain else None
        done = self._roots_done()
        rest = self._roots[len(done) :]
        if not rest:
            return done
        return done + tuple(self._placed(rest, top))

    def _roots_done(self) -> tuple[CallNode, ...]:
        """The leading run of finished top-level calls, kept while it does not grow."""
        done, roots = self._root_done, self._roots
        n = len(done)
        if n < len(roots) and roots[n].__class__ is CallNode:
            while n < len(roots) and roots[n].__class__ is CallNode:
                n += 1
            done = self._root_done = tuple(roots[:n])  # type: ignore[arg-type]
        return done

    def _chain(self, call_id: int) -> tuple[_OpenCall, ...]:
        """The running calls from the top level down to ``call_id``: fixed while it runs."""
        chain = self._chains.get(call_id)
        if chain is None:
            calls: list[_OpenCall] = []
            at: int | None = call_id
            while at is not None:
                call = self._open[at]
                calls.append(call)
                at = call.parent
            chain = self._chains[call_id] = tuple(reversed(calls))
        return chain

    def _stub(self, call_id: int) -> CallNode:
        """A running call beside the frame's path; the same while it runs."""
        stub = self._stubs.get(call_id)
        if stub is None:
            call = self._open[call_id]
            stub = self._stubs[call_id] = CallNode(
                call.call_id,
                call.function,
                Status.RUNNING,
                call.input,
                retry_of=call.retry_of,
                ref=call.ref,
                detached=True,
            )
        return stub

    def _placed(self, slots: list[_Slot], path_child: CallNode | None) -> list[CallNode]:
        """Slots as nodes: the path's running child built, other running calls stubs."""
        nodes: list[CallNode] = []
        for s in slots:
            if isinstance(s, CallNode):
                nodes.append(s)
            elif path_child is not None and s == path_child.call_id:
                nodes.append(path_child)
            else:
                nodes.append(self._stub(s))
        return nodes

    def _path_node(self, chain: tuple[_OpenCall, ...]) -> CallNode:
        """The frame's path as running nodes, built from the frame up: a loop, not
        recursion, as a chain of running calls may nest deeper than Python's limit."""
        below: CallNode | None = None
        for call in reversed(chain):
            head, slots = call.head, call.slots
            n = len(head)
            if n < len(slots) and slots[n].__class__ is CallNode:  # a slot finished since
                n = len(call.finished_head())
            if len(slots) == n:
                children = call.kids_view
                if children is None:
                    children = call.kids_view = SharedPrefix(head, n)
            elif below is not None and len(slots) == n + 1 and slots[n] == below.call_id:
                children = SharedPrefix(head, n, (below,))  # the usual: the path's child last
            else:
                children = SharedPrefix(head, n, tuple(self._placed(slots[n:], below)))
            llm = call.llm_view
            if llm is None:
                llm = call.llm_view = SharedPrefix(call.llm, len(call.llm))
            tools = call.tools_view
            if tools is None:
                tools = call.tools_view = SharedPrefix(call.tools, len(call.tools))
            below = CallNode(
                call.call_id,
                call.function,
                Status.RUNNING,
                call.input,
                None,
                None,
                children,
                llm,
                tools,
                Outcome.OK,
                None,
                call.retry_of,
                call.ref,
                False,
            )
        assert below is not None
        return below

    def snapshot(self, call_id: int | None = None) -> CallNode:
        """The root of the frame's own path (a one-root session's whole tree)."""
        roots = self.roots(call_id)
        if not roots:
            raise CallTreeError("the call tree is empty")
        running = [r for r in roots if r.status is Status.RUNNING and not r.detached]
        return running[0] if running else roots[-1]
