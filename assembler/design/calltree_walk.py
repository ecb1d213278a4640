"""Walks over the call tree that the YAML renderer needs, iterative at any depth.

A call stack may nest deeper than Python's recursion limit (a thousand calls is an
agent's legitimate worst case), so nothing here recurses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from assembler.design.calltree import CallNode, Expose, TreeOptions


def flatten(children: Sequence[CallNode], options: TreeOptions) -> Iterator[CallNode]:
    """Children as shown: a failed or abandoned call leaves with its subtree; a hidden
    call leaves no node, its own children take its place.

    Iterative, like every walk here: a call stack may nest deeper than Python's.
    """
    stack = [iter(children)]
    hidden = options.hidden_names
    while stack:
        for child in stack[-1]:
            if child.off_path:
                continue
            if child.function in hidden if hidden is not None else options.hidden(child.function):
                stack.append(iter(child.children))
                break
            yield child
        else:
            stack.pop()


def flow(node: CallNode, options: TreeOptions, name: Callable[[str], str]) -> str:
    """``{function: NAME, status: done, children: [...]}``, built bottom-up; ``name``
    spells a function's name as a YAML scalar."""
    texts: dict[int, str] = {}
    stack: list[tuple[CallNode, list[CallNode] | None]] = [(node, None)]
    while stack:
        current, kids = stack.pop()
        if kids is None:
            kids = list(flatten(current.children, options))
            stack.append((current, kids))
            stack.extend((k, None) for k in kids)
            continue
        parts = [f"function: {name(current.function)}", "status: done"]
        if kids:
            parts.append(f"children: [{', '.join(texts.pop(id(k)) for k in kids)}]")
        texts[id(current)] = "{" + ", ".join(parts) + "}"
    return texts[id(node)]


def effective(options: TreeOptions, node: CallNode, mode: str) -> tuple[Expose, str]:
    """A finished node's expose and render mode: ``full`` keeps its whole subtree."""
    expose = options.expose_of(node.function)
    if expose is Expose.FULL or mode == "kept":
        return Expose.FULL, "kept"
    return expose, mode


def pending(
    node: CallNode, indent: int, mode: str, options: TreeOptions, oid: int
) -> list[tuple[CallNode, int, str]]:
    """The finished nodes a rendering of ``node`` still needs, parents before children
    (texts already memoized on a node are not walked again)."""
    order: list[tuple[CallNode, int, str]] = []
    stack = [(node, indent, mode)]
    while stack:
        current, at, how = stack.pop()
        if (at, how, oid) in current.rendered:
            continue
        order.append((current, at, how))
        expose, how = effective(options, current, how)
        if how == "folded" or (how == "collapsed" and expose is Expose.IO):
            continue  # one line, no child renderings needed
        child_mode = "kept" if how == "kept" else "collapsed"
        stack.extend((k, at + 4, child_mode) for k in flatten(current.children, options))
    return order
