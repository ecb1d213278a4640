"""Render the call tree as the YAML the model reads (design §4' item 7).

Rules (seed-tables.md, "Released nodes"), for the default ``expose=io``:

- a running node shows ``function``, its whole ``input``, ``status: running``
  and its children;
- a finished node whose parent is still running shows ``function`` and its key
  ``output`` (input released), its children collapsed;
- every node inside a finished subtree is one flow-style line
  ``{function: NAME, status: done}``.

Failed and abandoned calls leave the tree with their whole subtree (reading
10); a running call beside the frame's path shows only that it runs. Calls
appear in start order.

With a budget (§5, "compress only when over budget") an over-long tree is
folded: first the structure inside finished subtrees goes (a finished call
keeps its key output, not its children), then, as far as still needed, the
oldest finished calls nearest the root become one ``{omitted_calls: N}``
line. The running path is never folded.

Finished subtrees never change, so their text is memoized per node; a render
costs the active path plus one string join per finished sibling.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache

from assembler.design import calltree_pieces as pieces
from assembler.design.calltree import (
    CallNode,
    Expose,
    RenderRange,
    SharedPrefix,
    Status,
    TreeOptions,
)
from assembler.design.calltree_scalars import (
    CHARS_PER_TOKEN,
    estimate_tokens,
    extra_lines,
    field_lines,
    list_item,
    name_scalar,
)
from assembler.design.calltree_walk import effective, flatten, flow, pending
from assembler.design.piece_text import PieceText

OPEN_TAG = "<call_tree>"
CLOSE_TAG = "</call_tree>"


class _Render:
    """One render: the options, their interned id (hashed once), the frame's function."""

    def __init__(self, options: TreeOptions, frame_fn: str | None, fold: int = 0) -> None:
        self.options = options
        self.frame_fn = frame_fn
        #: 0 = no folding; 1 = finished subtrees keep no structure, oldest calls omitted
        self.fold = fold
        #: call_id → index of its first child still shown (the ones before are omitted)
        self.start: dict[int, int] = {}
        self.range = options.range_of(frame_fn) if frame_fn else _UNLIMITED
        known = _last_options
        if known[0] is options:  # every step of a session renders with the same options
            self.oid, self.incremental = known[1], known[2] and not fold
            return
        self.oid = _OPTION_IDS.setdefault(options, len(_OPTION_IDS))
        self.incremental = options.default_expose is not Expose.HIDDEN and all(
            e is not Expose.HIDDEN for _, e in options.expose
        )
        _remember_options(options, self.oid, self.incremental)
        self.incremental = self.incremental and not fold

    def done(self, node: CallNode, indent: int, mode: str) -> str:
        """A finished node: ``released`` (its parent runs), ``collapsed`` or ``kept`` (io
        shown); children first from an explicit stack, each text memoized on its node."""
        key = (indent, mode, self.oid)
        cached = node.rendered.get(key)
        if cached is not None:
            return cached
        for current, at, how in reversed(pending(node, indent, mode, self.options, self.oid)):
            self._done_one(current, at, how)  # children before their parent
        return node.rendered[key]

    def _done_one(self, node: CallNode, indent: int, asked: str) -> None:
        """Render one finished node whose shown children are already memoized."""
        options = self.options
        expose, mode = effective(self.options, node, asked)
        inner = indent + 2
        if mode == "collapsed" and expose is Expose.IO:
            text = " " * indent + "- " + flow(node, options, name_scalar)
        else:
            body = [f"{' ' * inner}function: {name_scalar(node.function)}"]
            keep_io = mode == "kept" or expose is not Expose.IO
            if keep_io and node.input is not None:
                body += field_lines("input", node.input, inner)
            out = node.output if keep_io else node.shown_output
            if out is not None:
                body += field_lines("output", out, inner)
            if out is None or mode not in ("released", "folded"):
                body.append(f"{' ' * inner}status: done")
            body += extra_lines(node, expose, inner)
            kids = list(flatten(node.children, options)) if mode != "folded" else []
            if kids:
                body.append(f"{' ' * inner}children:")
                child_mode = "kept" if mode == "kept" else "collapsed"
                body += [k.rendered[(inner + 2, child_mode, self.oid)] for k in kids]
            text = "\n".join(list_item(body, indent))
        node.rendered[(indent, asked, self.oid)] = text

    def finished_children(
        self, node: CallNode, indent: int, running_child: bool = False
    ) -> tuple[str, ...] | None:
        """The released children of a running node, extended from the last render.

        Finished children are shared between snapshots and never change, so the
        text rendered for the first n of them is reused as is. It is kept as a
        sealed piece and an open one: a new child extends the open piece, which
        is sealed onto the other once longer than ``_OPEN_LIMIT``, so a step
        copies about that much text rather than all finished children. None
        when a child not yet rendered is off the path or runs beside it: the
        caller then renders the children one by one. ``running_child``: the
        last child is the running one on the frame's path.
        """
        kids = node.children
        n = len(kids) - running_child
        # a running call's finished children are its shared list's: read it directly
        item = (
            kids.head.__getitem__
            if kids.__class__ is SharedPrefix and n <= kids.n
            else kids.__getitem__
        )
        key = (node.call_id, indent, self.oid)
        hit = _prefix.get(key)
        if hit is not None and hit[0] == n and n and item(n - 1) is hit[1]:
            return hit[4]  # no child finished since: the very pieces of the last render
        start, sealed, text = 0, "", ""
        if hit is not None and 0 < hit[0] <= n and item(hit[0] - 1) is hit[1]:
            start, sealed, text = hit[0], hit[2], hit[3]
        if start < n:
            new_kids = item(slice(start, n))
            if any(k.off_path or k.status is Status.RUNNING for k in new_kids):
                return None
            new = "\n".join(self.done(k, indent, "released") for k in new_kids)
            if text:
                before, text = text, f"{text}\n{new}"
                pieces.extended.append((text, before))
            else:
                text = new
            if len(text) > _OPEN_LIMIT:
                if sealed:
                    before, sealed = sealed, f"{sealed}\n{text}"
                    pieces.extended.append((sealed, before))
                else:
                    sealed = text
                text = ""
        shown = (
            (sealed, text) if sealed and text else (sealed,) if sealed else (text,) if text else ()
        )
        if n:
            _prefix[key] = (n, item(n - 1), sealed, text, shown)
            _prefix.move_to_end(key)
            if len(_prefix) > _PREFIX_LIMIT:
                _prefix.popitem(last=False)
        return shown

    def running_header(self, node: CallNode, indent: int) -> str:
        """A running node's own lines. Under ``expose=io`` they depend on its name
        and input only, so they are kept from one snapshot to the next."""
        key = (node.call_id, indent, self.oid)
        hit = _headers.get(key)  # only ever holds expose=io headers
        if hit is not None and hit[0] is node.input and hit[1] == node.function:
            return hit[2]
        expose = self.options.expose_of(node.function)
        inner = indent + 2
        body = [f"{' ' * inner}function: {name_scalar(node.function)}"]
        if node.input is not None:
            body += field_lines("input", node.input, inner)
        body.append(f"{' ' * inner}status: running")
        body += extra_lines(node, expose, inner)
        text = "\n".join(list_item(body, indent))
        if expose is Expose.IO:
            _headers[key] = (node.input, node.function, text)
            if len(_headers) > _PREFIX_LIMIT:
                _headers.pop(next(iter(_headers)))
        return text

    def stub(self, node: CallNode, indent: int) -> str:
        """A call running beside the frame's path: that it runs, not what it does."""
        inner = indent + 2
        body = [f"{' ' * inner}function: {name_scalar(node.function)}"]
        if node.input is not None:
            body += field_lines("input", node.input, inner)
        body.append(f"{' ' * inner}status: running")
        return "\n".join(list_item(body, indent))

    def running(self, node: CallNode, indent: int, out: list[str]) -> None:
        """The running path, a level per turn; lines after a running child wait for it."""
        tails: list[Sequence[str]] = []
        current: CallNode | None = node
        while current is not None:
            current, tail = self._running_level(current, indent, out)
            if tail:  # mostly none: the running child is the last one
                tails.append(tail)
            indent += 4
        for tail in reversed(tails):
            out.extend(tail)

    def _running_level(
        self, node: CallNode, indent: int, out: list[str]
    ) -> tuple[CallNode | None, Sequence[str]]:
        """One running node's lines; its running child (rendered next) and the lines after it."""
        inner = indent + 2
        out.append(self.running_header(node, indent))
        kids = node.children
        if kids.__class__ is SharedPrefix:  # a running call's: its items read directly
            rest = kids.rest
            last = rest[-1] if rest else kids.head[kids.n - 1] if kids.n else None
        else:
            last = kids[-1] if kids else None
        rng = self.range
        running_child = last is not None and last.status is Status.RUNNING and not last.detached
        cap = rng.subcalls if not running_child else (-1 if rng.callers is None else rng.callers)
        if self.incremental and cap < 0:
            if last is None:
                return None, ()
            finished = self.finished_children(node, inner + 2, running_child)
            if finished is not None:
                out.append(_children_line(inner))
                out.extend(finished)
                return (last if running_child else None), ()
        return self.children(node, inner, out)

    def children(
        self, node: CallNode, inner: int, out: list[str]
    ) -> tuple[CallNode | None, list[str]]:
        """Children in start order, under render_range and folding; returns the running
        child and the lines of those after it (the ones before it go to ``out``)."""
        start = self.start.get(node.call_id, 0)
        folded_away = sum(1 for k in node.children[:start] if not k.off_path) if start else 0
        kids = list(flatten(node.children[start:], self.options))
        if not kids and not folded_away:
            return None, []
        on_path = next((k for k in kids if k.status is Status.RUNNING and not k.detached), None)
        finished = [k for k in kids if k.status is Status.DONE]
        rng = self.range
        cap = rng.subcalls if on_path is None else (-1 if rng.callers is None else rng.callers)
        omitted = len(finished) - cap if 0 <= cap < len(finished) else 0
        out.append(f"{' ' * inner}children:")
        if folded_away + omitted:
            out.append(f"{' ' * (inner + 2)}- {{omitted_calls: {folded_away + omitted}}}")
        skip = {id(k) for k in finished[:omitted]}
        mode = "folded" if self.fold else "released"
        after: list[str] = []
        lines = out
        for k in kids:
            if id(k) in skip:
                continue
            if k.status is Status.DONE:
                lines.append(self.done(k, inner + 2, mode))
            elif k is on_path:
                lines = after  # what follows is drawn once the running path below is out
            else:
                lines.append(self.stub(k, inner + 2))
        return on_path, after


_UNLIMITED = RenderRange()


@lru_cache(maxsize=512)
def _children_line(inner: int) -> str:
    # one object per indent, so successive renderings share it (see calltree_pieces)
    return f"{' ' * inner}children:"


_OPTION_IDS: dict[TreeOptions, int] = {}
_last_options: tuple[TreeOptions | None, int, bool] = (None, 0, False)


def _remember_options(options: TreeOptions, oid: int, incremental: bool) -> None:
    global _last_options
    _last_options = (options, oid, incremental)


_headers: dict[tuple[int, int, int], tuple[str | None, str, str]] = {}
_PREFIX_LIMIT = 4096
_prefix: OrderedDict[tuple[int, int, int], tuple[int, CallNode, str, str, tuple[str, ...]]] = (
    OrderedDict()
)
#: The open piece of finished children is sealed past this many characters.
_OPEN_LIMIT = 1 << 16


def clear_caches() -> None:
    """Forget the incremental renderings kept between snapshots (for benchmarks)."""
    _prefix.clear()
    _headers.clear()


def _render(roots: Sequence[CallNode], render: _Render) -> list[str]:
    """The rendering as pieces, to be joined with line breaks."""
    lines: list[str] = [OPEN_TAG]
    mode = "folded" if render.fold else "released"
    for root in roots:
        if root.off_path:
            continue
        if render.options.hidden(root.function):
            raise ValueError(f"the root call {root.function!r} cannot be hidden")
        if root.status is Status.DONE:
            lines.append(render.done(root, 0, mode))
        elif root.detached:
            lines.append(render.stub(root, 0))
        else:
            render.running(root, 0, lines)
    lines.append(CLOSE_TAG)
    return lines


def _running_child(node: CallNode) -> CallNode | None:
    for k in reversed(node.children):  # the path's child is almost always the last
        if k.status is Status.RUNNING and not k.detached and not k.off_path:
            return k
    return None


def _allot(roots: Sequence[CallNode], render: _Render, budget: int) -> dict[int, int]:
    """Where each running call's shown children start, so the folded tree fits.

    The running path is always shown. The rest of the budget goes to finished
    calls, deepest level first and newest first, so the oldest work nearest the
    root is omitted first. Costs the calls kept, not the calls made.
    """
    path: list[tuple[CallNode, int]] = []
    level = next((r for r in roots if r.status is Status.RUNNING and not r.detached), None)
    indent = 0
    while level is not None:
        path.append((level, indent))
        level, indent = _running_child(level), indent + 4
    # what is always shown: the tags, the running path's own lines, its "children:" lines
    left = budget - estimate_tokens(OPEN_TAG + CLOSE_TAG) - 1
    left -= sum(
        estimate_tokens(render.running_header(n, i)) + estimate_tokens(" " * i + "  children:") + 2
        for n, i in path
    )
    left -= sum(
        estimate_tokens(render.done(r, 0, "folded")) for r in roots if r.status is Status.DONE
    )
    start: dict[int, int] = {}
    for node, indent in reversed(path):
        kids = node.children
        first = len(kids)
        omitted_line = estimate_tokens(" " * (indent + 4) + "- {omitted_calls: 00000}") + 1
        left -= omitted_line  # reserved: given back if nothing is omitted here
        for i in range(len(kids) - 1, -1, -1):
            k = kids[i]
            if k.off_path or k.status is Status.RUNNING:
                first = i
                continue
            cost = estimate_tokens(render.done(k, indent + 4, "folded")) + 1
            if cost > left:
                left = 0
                break
            left -= cost
            first = i
        if first:
            start[node.call_id] = first
        elif left:
            left += omitted_line
    return start


def render_call_tree(
    tree: CallNode | Sequence[CallNode], options: TreeOptions, frame_function: str | None
) -> str:
    """The ``<call_tree>`` block for a snapshot taken inside ``frame_function``.

    ``tree`` is the root call, or every top-level call in start order.
    ``frame_function`` None: an LLM call at the top level, which sees the whole
    tree, fully visible (no render_range applies).
    """
    return str(render_call_tree_pieces(tree, options, frame_function))


def render_call_tree_pieces(
    tree: CallNode | Sequence[CallNode], options: TreeOptions, frame_function: str | None
) -> PieceText:
    """:func:`render_call_tree` as the pieces it is joined from, sharing most of them
    with the rendering before: what the assembler hands on, so no step copies the tree."""
    roots = (tree,) if isinstance(tree, CallNode) else tuple(tree)
    pieces.extended.clear()
    parts = _render(roots, _Render(options, frame_function))
    budget = options.budget
    # the joined length, known without joining
    if budget is None or -(-(sum(map(len, parts)) + len(parts) - 1) // CHARS_PER_TOKEN) <= budget:
        return pieces.joined(parts)
    render = _Render(options, frame_function, fold=1)
    render.start = _allot(roots, render, budget)
    return pieces.joined(_render(roots, render))


def tree_yaml(block: str) -> str:
    """The YAML inside a rendered ``<call_tree>`` block."""
    return block.removeprefix(OPEN_TAG + "\n").removesuffix("\n" + CLOSE_TAG)
