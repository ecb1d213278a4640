"""Render the call tree as the YAML the model reads (design §4' item 7).

Rules (seed-tables.md, "Released nodes"), for the default ``expose=io``:

- a running node shows ``function``, its whole ``input``, ``status: running``
  and its children;
- a finished node whose parent is still running shows ``function`` and its key
  ``output`` (input released), its children collapsed;
- every node inside a finished subtree is one flow-style line
  ``{function: NAME, status: done}``.

Finished subtrees never change, so their text is memoized per node; a render
costs the active path plus one string join per finished sibling.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Iterator

from assembler.design.calltree import CallNode, Expose, Status, TreeOptions

OPEN_TAG = "<call_tree>"
CLOSE_TAG = "</call_tree>"

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*\Z")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}
# Characters PyYAML refuses or folds inside a double-quoted scalar; JSON leaves them raw.
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
# Anything that would make a literal block scalar unfaithful.
_BLOCK_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)

# A line ending in a space or a tab: a literal block would drop it.
_TRAILING_BLANK = re.compile(r"[ \t](?:\n|\Z)")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def quote(text: str) -> str:
    """A double-quoted YAML scalar that parses back to ``text`` exactly."""
    return _UNSAFE.sub(_escape, json.dumps(text, ensure_ascii=False))


def name_scalar(name: str) -> str:
    """Function names stay plain when YAML would read them back unchanged."""
    if _PLAIN.match(name) and name.lower() not in _RESERVED:
        return name
    return quote(name)


def _block_ok(text: str) -> bool:
    return (
        "\n" in text.rstrip("\n")
        and not _BLOCK_UNSAFE.search(text)
        and not text[:1].isspace()
        and not text.endswith("\n\n")
        and not _TRAILING_BLANK.search(text)
    )


def field_lines(key: str, value: str, indent: int) -> list[str]:
    """``key: value`` at ``indent``; multi-line text as a literal ``|`` block."""
    pad = " " * indent
    if _block_ok(value):
        chomp = "" if value.endswith("\n") else "-"
        body = value[:-1] if value.endswith("\n") else value
        inner = " " * (indent + 2)
        return [f"{pad}{key}: |{chomp}"] + [
            f"{inner}{line}" if line else "" for line in body.split("\n")
        ]
    return [f"{pad}{key}: {quote(value)}"]


def _flatten(children: tuple[CallNode, ...], options: TreeOptions) -> Iterator[CallNode]:
    """Children as shown: a hidden call leaves no node, its own children take its place."""
    for child in children:
        if options.expose_of(child.function) is Expose.HIDDEN:
            yield from _flatten(child.children, options)
        else:
            yield child


def _flow(node: CallNode, options: TreeOptions) -> str:
    parts = [f"function: {name_scalar(node.function)}", "status: done"]
    kids = [_flow(c, options) for c in _flatten(node.children, options)]
    if kids:
        parts.append(f"children: [{', '.join(kids)}]")
    return "{" + ", ".join(parts) + "}"


def _extras(node: CallNode, expose: Expose, indent: int) -> list[str]:
    """The ``llm`` and ``tools`` lists that ``expose=llm`` / ``full`` keep."""
    lines: list[str] = []
    pad = " " * indent
    if expose in (Expose.LLM, Expose.FULL) and node.llm:
        lines.append(f"{pad}llm:")
        for ex in node.llm:
            item = field_lines("input", ex.input, indent + 4)
            item[0] = f"{pad}  - {item[0].lstrip()}"
            lines += item + field_lines("output", ex.output, indent + 4)
    if expose is Expose.FULL and node.tools:
        lines.append(f"{pad}tools:")
        for use in node.tools:
            lines.append(f"{pad}  - name: {name_scalar(use.name)}")
            if use.input is not None:
                lines += field_lines("input", use.input, indent + 4)
            if use.output is not None:
                lines += field_lines("output", use.output, indent + 4)
    return lines


def _item(lines: list[str], indent: int) -> list[str]:
    """Turn the first of a mapping's lines into a ``- `` list item."""
    lines[0] = " " * indent + "- " + lines[0][indent + 2 :]
    return lines


class _Render:
    """One render: the options, their interned id (hashed once), the frame's function."""

    def __init__(self, options: TreeOptions, frame_fn: str) -> None:
        self.options = options
        self.frame_fn = frame_fn
        known = _last_options
        if known[0] is options:  # every step of a session renders with the same options
            self.oid, self.incremental = known[1], known[2]
            return
        self.oid = _OPTION_IDS.setdefault(options, len(_OPTION_IDS))
        self.incremental = options.default_expose is not Expose.HIDDEN and all(
            e is not Expose.HIDDEN for _, e in options.expose
        )
        _remember_options(options, self.oid, self.incremental)

    def done(self, node: CallNode, indent: int, mode: str) -> str:
        """A finished node: ``released`` (its parent runs), ``collapsed`` or ``kept`` (io shown)."""
        per_node = node.rendered
        key = (indent, mode, self.oid)
        cached = per_node.get(key)
        if cached is not None:
            return cached
        options = self.options
        expose = options.expose_of(node.function)
        if expose is Expose.FULL or mode == "kept":  # full keeps its whole subtree
            expose, mode = Expose.FULL, "kept"
        inner = indent + 2
        if mode == "collapsed" and expose is Expose.IO:
            text = " " * indent + "- " + _flow(node, options)
        else:
            body = [f"{' ' * inner}function: {name_scalar(node.function)}"]
            keep_io = mode == "kept" or expose is not Expose.IO
            if keep_io and node.input is not None:
                body += field_lines("input", node.input, inner)
            out = node.output if keep_io else node.shown_output
            if out is not None:
                body += field_lines("output", out, inner)
            if out is None or mode != "released":
                body.append(f"{' ' * inner}status: done")
            body += _extras(node, expose, inner)
            kids = list(_flatten(node.children, options))
            if kids:
                body.append(f"{' ' * inner}children:")
                child_mode = "kept" if mode == "kept" else "collapsed"
                body += [self.done(c, inner + 2, child_mode) for c in kids]
            text = "\n".join(_item(body, indent))
        per_node[key] = text
        return text

    def finished_children(self, node: CallNode, indent: int) -> str:
        """The released children of a running node, extended from the last render.

        Finished children are shared between snapshots and only ever appended,
        so the text rendered for the first n of them is reused as is.
        """
        kids = node.children
        n = len(kids) - (1 if kids and kids[-1].status is Status.RUNNING else 0)
        key = (node.call_id, indent, self.oid)
        hit = _prefix.get(key)
        start, text = 0, ""
        if hit is not None and 0 < hit[0] <= n and kids[hit[0] - 1] is hit[1]:
            start, text = hit[0], hit[2]
        if start < n:
            new = "\n".join(self.done(k, indent, "released") for k in kids[start:n])
            text = f"{text}\n{new}" if text else new
            _prefix[key] = (n, kids[n - 1], text)
            _prefix.move_to_end(key)
            if len(_prefix) > _PREFIX_LIMIT:
                _prefix.popitem(last=False)
        return text

    def running_header(self, node: CallNode, indent: int) -> str:
        """A running node's own lines. Under ``expose=io`` they depend on its name
        and input only, so they are kept from one snapshot to the next."""
        expose = self.options.expose_of(node.function)
        key = (node.call_id, indent, self.oid)
        hit = _headers.get(key) if expose is Expose.IO else None
        if hit is not None and hit[0] is node.input and hit[1] == node.function:
            return hit[2]
        inner = indent + 2
        body = [f"{' ' * inner}function: {name_scalar(node.function)}"]
        if node.input is not None:
            body += field_lines("input", node.input, inner)
        body.append(f"{' ' * inner}status: running")
        body += _extras(node, expose, inner)
        text = "\n".join(_item(body, indent))
        if expose is Expose.IO:
            _headers[key] = (node.input, node.function, text)
            if len(_headers) > _PREFIX_LIMIT:
                _headers.pop(next(iter(_headers)))
        return text

    def running(self, node: CallNode, indent: int, out: list[str]) -> None:
        options = self.options
        inner = indent + 2
        out.append(self.running_header(node, indent))
        last = node.children[-1] if node.children else None
        rng = options.range_of(self.frame_fn)
        running_child = last is not None and last.status is Status.RUNNING
        cap = rng.subcalls if not running_child else (-1 if rng.callers is None else rng.callers)
        if self.incremental and cap < 0:
            if not node.children:
                return
            out.append(f"{' ' * inner}children:")
            text = self.finished_children(node, inner + 2)
            if text:
                out.append(text)
            if running_child:
                assert last is not None
                self.running(last, inner + 2, out)
            return
        kids = list(_flatten(node.children, options))
        running = kids.pop() if kids and kids[-1].status is Status.RUNNING else None
        if 0 <= cap < len(kids):
            omitted, kids = len(kids) - cap, (kids[len(kids) - cap :] if cap else [])
        else:
            omitted = 0
        if not kids and running is None and not omitted:
            return
        out.append(f"{' ' * inner}children:")
        if omitted:
            out.append(f"{' ' * (inner + 2)}- {{omitted_calls: {omitted}}}")
        out.extend(self.done(k, inner + 2, "released") for k in kids)
        if running is not None:
            self.running(running, inner + 2, out)


_OPTION_IDS: dict[TreeOptions, int] = {}
_last_options: tuple[TreeOptions | None, int, bool] = (None, 0, False)


def _remember_options(options: TreeOptions, oid: int, incremental: bool) -> None:
    global _last_options
    _last_options = (options, oid, incremental)


_headers: dict[tuple[int, int, int], tuple[str | None, str, str]] = {}
_PREFIX_LIMIT = 4096
_prefix: OrderedDict[tuple[int, int, int], tuple[int, CallNode, str]] = OrderedDict()


def clear_caches() -> None:
    """Forget the incremental renderings kept between snapshots (for benchmarks)."""
    _prefix.clear()
    _headers.clear()


def render_call_tree(root: CallNode, options: TreeOptions, frame_function: str) -> str:
    """The ``<call_tree>`` block for a snapshot taken inside ``frame_function``."""
    render = _Render(options, frame_function)
    lines: list[str] = [OPEN_TAG]
    if root.status is Status.RUNNING:
        if options.expose_of(root.function) is Expose.HIDDEN:
            raise ValueError(f"the root call {root.function!r} cannot be hidden")
        render.running(root, 0, lines)
    else:
        lines.append(render.done(root, 0, "released"))
    lines.append(CLOSE_TAG)
    return "\n".join(lines)


def tree_yaml(block: str) -> str:
    """The YAML inside a rendered ``<call_tree>`` block."""
    return block.removeprefix(OPEN_TAG + "\n").removesuffix("\n" + CLOSE_TAG)
