"""Context Assembly Inspector: three-layer, registry-based LLM context assembly.

The public surface. Everything else is an implementation detail.
"""

from assembler.assembly import Assembly, BlockRecord, BlockStatus, assemble
from assembler.calltree import (
    CallNode,
    CallTreeBuilder,
    CallTreeError,
    Expose,
    RenderRange,
    Status,
    TreeOptions,
)
from assembler.calltree_yaml import render_call_tree
from assembler.components import default_registry, register_builtins
from assembler.context import (
    Agent,
    Bindings,
    Context,
    ContractKind,
    Environment,
    Frame,
    Memory,
    MemoryState,
    OutputContract,
    Profile,
    Skill,
    Tool,
    WorkspaceFile,
)
from assembler.layers import Layer, Placement
from assembler.layouts import BUILTIN_LAYOUTS, Layout, LayoutError, builtin_layout, load_layout
from assembler.pipeline import AssembledStep, SessionAssembler
from assembler.registry import ContextComponent, RegistrationError, Registry, always
from assembler.replay import Step, iter_steps, replay
from assembler.session import Session, SessionError, Usage, load_session, parse_session
from assembler.wire import Wire, WireBlock, build_wire, to_anthropic, to_openai

__all__ = [
    "BUILTIN_LAYOUTS",
    "Agent",
    "AssembledStep",
    "Assembly",
    "Bindings",
    "BlockRecord",
    "BlockStatus",
    "CallNode",
    "CallTreeBuilder",
    "CallTreeError",
    "Context",
    "ContextComponent",
    "ContractKind",
    "Environment",
    "Expose",
    "Frame",
    "Layer",
    "Layout",
    "LayoutError",
    "Memory",
    "MemoryState",
    "OutputContract",
    "Placement",
    "Profile",
    "RegistrationError",
    "Registry",
    "RenderRange",
    "Session",
    "SessionAssembler",
    "SessionError",
    "Skill",
    "Status",
    "Step",
    "Tool",
    "TreeOptions",
    "Usage",
    "Wire",
    "WireBlock",
    "WorkspaceFile",
    "always",
    "assemble",
    "build_wire",
    "builtin_layout",
    "default_registry",
    "iter_steps",
    "load_layout",
    "load_session",
    "parse_session",
    "register_builtins",
    "render_call_tree",
    "replay",
    "to_anthropic",
    "to_openai",
]
