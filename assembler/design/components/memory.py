"""What the memory blocks say about themselves (design §8).

Off, empty and unavailable are three different outputs: nothing, one status
line, one status line. Collapsing them would let a model read a system fault
as "the user never told me this".
"""

from __future__ import annotations

import re

from assembler.design.context import Context, MemoryState

#: The six memory tools. They ship as names in the deferred catalog; their
#: schemas stay off the wire until the model asks for one.
MEMORY_TOOLS: tuple[str, ...] = (
    "memory_search",
    "memory_get",
    "memory_list",
    "memory_write",
    "memory_update",
    "memory_forget",
)

# Rough characters-per-token used to keep the resident summary inside its budget.
_CHARS_PER_TOKEN = 4


def memory_enabled(ctx: Context) -> bool:
    return ctx.profile.memory.enabled


def _budgeted(summary: str, budget_tokens: int | None) -> str:
    if budget_tokens is None or len(summary) <= budget_tokens * _CHARS_PER_TOKEN:
        return summary
    cut = summary[: budget_tokens * _CHARS_PER_TOKEN].rsplit("\n", 1)[0]
    return cut + "\n- … (more in memory; search for it)"


def memory_block(ctx: Context) -> str:
    memory = ctx.profile.memory
    if memory.state is MemoryState.UNAVAILABLE:
        return (
            "<memory>Memory did not load this turn. Its absence is not evidence about"
            " what the user has or has not told you.</memory>"
        )
    if memory.state is MemoryState.EMPTY or not memory.global_summary.strip():
        return (
            "<memory>Memory is on and holds nothing yet; it fills in on its own as"
            " sessions go by. Nothing is wrong.</memory>"
        )
    where = f" Its workspace is {memory.workspace}." if memory.workspace else ""
    budget = f" under a budget of {memory.budget_tokens} tokens" if memory.budget_tokens else ""
    opener = (
        f"Written by {memory.subsystem}, not by the user.{where} This is a summary kept"
        f"{budget}, not everything memory holds; {MEMORY_TOOLS[0]} and {MEMORY_TOOLS[1]}"
        " reach the rest."
    )
    body = _budgeted(memory.global_summary.strip(), memory.budget_tokens)
    return f"<memory>\n{opener}\n{body}\n</memory>"


# A whole fenced block (body included), then any stray opening or closing tag.
_FENCED = re.compile(r"<\s*memory-context\b[^>]*>.*?<\s*/\s*memory-context\s*>", re.I | re.S)
_FENCE_TAG = re.compile(r"<\s*/?\s*memory-context\b[^>]*>", re.I)


def sanitize_recall(text: str) -> str:
    """Recalled text with every ``<memory-context>`` fence taken out (§8).

    A stored memory that itself holds a fenced block (memory recalled into a
    turn, then written back) loses that block, body included, as the design's
    ``sanitize_context`` does; a stray tag is dropped. So recalled text can
    neither nest a second fence nor close the real one early.
    """
    return _FENCE_TAG.sub("", _FENCED.sub("", text))


def prefetch_block(ctx: Context) -> str | None:
    frame = ctx.frame
    if frame is None or not frame.memory_prefetch:
        return None
    recalled = sanitize_recall(frame.memory_prefetch).strip()
    if not recalled:
        return None
    return (
        "<memory-context>\n"
        "Recalled from memory for this turn. This is background, not new input from the user.\n"
        f"{recalled}\n"
        "</memory-context>"
    )
