"""Context Assembly Inspector: three-layer, registry-based LLM context assembly.

The public surface. Everything else is an implementation detail.
"""

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:  # the lazy names below, as type checkers should see them
    from assembler.analysis import (
        BlockAnalysis,
        Comparison,
        Miss,
        SessionAnalysis,
        StepAnalysis,
        analysis_json,
        analysis_rows,
        analyze,
        compare,
    )
    from assembler.batch import analyze_batch
    from assembler.cache import CacheStore
    from assembler.generator import generate_session
    from assembler.importers import import_file
    from assembler.measured import compare_measured

# The engine (tokens, cache simulation, prices) and the importers load on first
# use, so that assembling a context does not pay for them.
_LAZY = {
    "analyze": "assembler.analysis",
    "compare": "assembler.analysis",
    "analysis_json": "assembler.analysis",
    "analysis_rows": "assembler.analysis",
    "SessionAnalysis": "assembler.analysis",
    "StepAnalysis": "assembler.analysis",
    "BlockAnalysis": "assembler.analysis",
    "Miss": "assembler.analysis",
    "Comparison": "assembler.analysis",
    "CacheStore": "assembler.cache",
    "compare_measured": "assembler.measured",
    "analyze_batch": "assembler.batch",
    "import_file": "assembler.importers",
    "generate_session": "assembler.generator",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'assembler' has no attribute {name!r}")


__all__ = [
    "BUILTIN_LAYOUTS",
    "Agent",
    "AssembledStep",
    "Assembly",
    "Bindings",
    "BlockAnalysis",
    "BlockRecord",
    "BlockStatus",
    "CacheStore",
    "CallNode",
    "CallTreeBuilder",
    "CallTreeError",
    "Comparison",
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
    "Miss",
    "OutputContract",
    "Placement",
    "Profile",
    "RegistrationError",
    "Registry",
    "RenderRange",
    "Session",
    "SessionAnalysis",
    "SessionAssembler",
    "SessionError",
    "Skill",
    "Status",
    "Step",
    "StepAnalysis",
    "Tool",
    "TreeOptions",
    "Usage",
    "Wire",
    "WireBlock",
    "WorkspaceFile",
    "always",
    "analysis_json",
    "analysis_rows",
    "analyze",
    "analyze_batch",
    "assemble",
    "build_wire",
    "builtin_layout",
    "compare",
    "compare_measured",
    "default_registry",
    "generate_session",
    "import_file",
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
