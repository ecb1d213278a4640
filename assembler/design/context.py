"""The frozen value every component builds from.

A :class:`Context` holds the session profile (what the agent is and where it
runs), the clock, and, for a call inside an agentic function, the frame: the
call tree snapshot, the call path and this call's input. New contexts are
derived with :func:`dataclasses.replace`; nothing here reads a global clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assembler.design.calltree import CallNode, TreeOptions


class MemoryState(StrEnum):
    HEALTHY = "healthy"
    EMPTY = "empty"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class Agent:
    name: str
    id: str = "main"
    description: str = ""
    inline_prompt: str | None = None


@dataclass(frozen=True)
class Environment:
    os: str = "Linux"
    shell: str = "bash"
    backend: str = "local"
    cwd: str = "/"
    harness: str | None = None
    state_dir: str | None = None
    git_repo: bool = False
    timezone: str = "UTC"


@dataclass(frozen=True)
class Tool:
    """A tool schema as it goes on the wire."""

    name: str
    description: str
    input_schema: dict[str, Any]
    source: str | None = None  # "mcp:<server>" for MCP tools

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@dataclass(frozen=True)
class Skill:
    name: str
    description: str = ""


@dataclass(frozen=True)
class Memory:
    """The memory subsystem as the agent sees it (design §8)."""

    backend: str = "none"  # "none" switches memory off
    state: MemoryState = MemoryState.HEALTHY
    subsystem: str = "the background memory writer"
    workspace: str | None = None
    budget_tokens: int | None = None
    global_summary: str = ""
    project: str = ""

    @property
    def enabled(self) -> bool:
        return self.backend != "none"


@dataclass(frozen=True)
class WorkspaceFile:
    path: str
    content: str


@dataclass(frozen=True)
class Bindings:
    session_id: str
    model: str
    thinking: str = "off"
    tier: str = "default"


@dataclass(frozen=True)
class Profile:
    """Everything about the session that is not the call in progress.

    Shared by every step until a context change derives a new one; builds
    that read only the profile are memoized per instance.
    """

    agent: Agent
    provider: str
    model: str
    channel: str = "webui"
    environment: Environment = field(default_factory=Environment)
    skills: tuple[Skill, ...] = ()
    tools: tuple[Tool, ...] = ()
    deferred_tools: tuple[str, ...] = ()
    computer_use: bool = False
    memory: Memory = field(default_factory=Memory)
    workspace_files: tuple[WorkspaceFile, ...] = ()
    user_profile: str = ""
    bindings: Bindings | None = None


class ContractKind(StrEnum):
    """How this call's output is consumed (design §4' item 2)."""

    DECISION = "decision"
    ARTIFACT = "artifact"
    NEXT = "next"


@dataclass(frozen=True)
class OutputContract:
    kind: ContractKind
    artifact: str | None = None
    consumer: str | None = None
    next_function: str | None = None
    param: str | None = None


@dataclass(frozen=True)
class Attachment:
    """A file the user sent with this call's input (L2-3, "user input with attachments").

    ``text`` is its content when it is text; for anything else (an image, a PDF
    page) ``tokens`` is the size the provider charged for it, as recorded.
    """

    name: str
    media_type: str = "text/plain"
    text: str | None = None
    tokens: int | None = None


# never changed once made; not frozen, as replay makes one per step (see CallNode)
@dataclass(slots=True)
class Frame:
    """The call in progress: where it sits and what it was given.

    ``function`` is None for an LLM call at the top level, outside any agentic
    function (the design's conversation scenario, ``frame_entry_seq=None``):
    no situation, and the whole tree is visible. ``tree`` is the root of the
    frame's own path (at the top level: the latest top-level call, or None
    before the first); ``roots`` holds every top-level call in start order when
    there is more than one.
    """

    function: str | None
    doc: str
    call_path: tuple[str, ...]
    tree: CallNode | None
    options: TreeOptions
    position: str | None = None
    contract: OutputContract | None = None
    user_input: str = ""
    output_schema: dict[str, Any] | None = None
    memory_prefetch: str | None = None
    attachments: tuple[Attachment, ...] = ()
    roots: tuple[CallNode, ...] = ()

    @property
    def top_level(self) -> bool:
        return self.function is None

    def top_level_calls(self) -> tuple[CallNode, ...]:
        """Every top-level call in start order, ``tree`` standing in for its own root
        (so a frame whose ``tree`` was replaced renders the replacement)."""
        tree = self.tree
        if not self.roots:
            return (tree,) if tree is not None else ()
        if tree is None:
            return self.roots
        return tuple(tree if r.call_id == tree.call_id else r for r in self.roots)


# never changed once made; not frozen, as replay makes one per step (see CallNode)
@dataclass(slots=True)
class Context:
    """What every ``condition`` and ``build`` receives. Frozen."""

    profile: Profile
    now: datetime
    frame: Frame | None = None

    def __post_init__(self) -> None:
        if self.now.tzinfo is None:
            raise ValueError("Context.now must be timezone-aware")


def format_time(at: datetime) -> str:
    """A timestamp as the session format writes it: ISO 8601, ``Z`` for UTC."""
    return at.isoformat().replace("+00:00", "Z")
