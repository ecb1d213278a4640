"""The whole recorded tree as rows for the inspector, off-path calls included.

The model's ``<call_tree>`` shows only the active path's calls (reading 10);
the inspector shows everything the recording holds and marks what the model
does not see: failed and abandoned calls (drawn struck out), hidden calls, and
the insides of a call running beside the frame's path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assembler.design.calltree import CallNode, Outcome, Status, TreeOptions


@dataclass(frozen=True)
class TreeRow:
    depth: int
    function: str
    status: Status
    outcome: Outcome
    call_id: int
    ref: str | None
    error: str | None
    retry_of: int | None
    seen_by_model: bool  # False: the model's tree leaves this call out
    why_unseen: (
        str  # "", "failed", "abandoned", "inside a failed call" / "… an abandoned …", "hidden"
    )

    @property
    def struck(self) -> bool:
        """Off the active path: draw it struck out."""
        return self.why_unseen in ("failed", "abandoned") or self.why_unseen.startswith("inside")


def tree_rows(roots: Sequence[CallNode], options: TreeOptions | None = None) -> list[TreeRow]:
    """Every call of a step's tree (``Step.tree``), depth first, in start order."""
    opts = options or TreeOptions()
    return list(_rows(roots, opts, 0, ""))


def off_path_calls(roots: Sequence[CallNode]) -> list[TreeRow]:
    """The failed and abandoned calls of a step's tree (retries and dropped branches)."""
    return [r for r in tree_rows(roots) if r.why_unseen in ("failed", "abandoned")]


def _rows(
    nodes: Sequence[CallNode], opts: TreeOptions, depth: int, inherited: str
) -> Iterator[TreeRow]:
    for node in nodes:
        why = inherited
        if not why and node.off_path:
            why = node.outcome.value
        elif not why and opts.hidden(node.function):
            why = "hidden"
        yield TreeRow(
            depth=depth,
            function=node.function,
            status=node.status,
            outcome=node.outcome,
            call_id=node.call_id,
            ref=node.ref,
            error=node.error,
            retry_of=node.retry_of,
            seen_by_model=not why,
            why_unseen=why,
        )
        inner = why
        if why in ("failed", "abandoned"):
            inner = f"inside {'an' if why == 'abandoned' else 'a'} {why} call"
        elif why == "hidden":
            inner = ""  # a hidden call's children take its place in the model's tree
        yield from _rows(node.children, opts, depth + 1, inner)
