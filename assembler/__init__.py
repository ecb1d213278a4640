"""Context Assembly Inspector: three-layer, registry-based LLM context assembly.

The public surface. Everything else is an implementation detail.
"""

from typing import TYPE_CHECKING

from assembler.analysis.engine import (
    BUILTIN_LAYOUTS,
    AssembledStep,
    Layout,
    LayoutError,
    SessionAssembler,
    builtin_layout,
    call_tree_rows,
    load_layout,
)
from assembler.design.assembly import Assembly, assemble
from assembler.design.blocks import BlockRecord, BlockStatus
from assembler.design.calltree import (
    CallNode,
    CallTreeError,
    Expose,
    Outcome,
    RenderRange,
    Status,
    TreeOptions,
)
from assembler.design.calltree_builder import CallTreeBuilder
from assembler.design.calltree_view import TreeRow, off_path_calls, tree_rows
from assembler.design.calltree_yaml import render_call_tree
from assembler.design.components import default_registry, register_builtins
from assembler.design.context import (
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
from assembler.design.layers import Layer, Placement
from assembler.design.registry import ContextComponent, RegistrationError, Registry, always
from assembler.design.wire import Wire, WireBlock, build_wire, to_anthropic, to_openai
from assembler.lazy import lazy_names
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import (
    ProviderDiagnostic,
    RequestSettings,
    Session,
    SessionError,
    Usage,
)
from assembler.sessions.replay import Step, iter_steps, replay

if TYPE_CHECKING:  # the lazy names below, as type checkers should see them
    from assembler.analysis.advice import Comparison, compare, layout_text, lint_session, recommend
    from assembler.analysis.bill import SessionCosts, compare_measured, session_costs
    from assembler.analysis.engine import (
        BlockAnalysis,
        DiagnosticCheck,
        Miss,
        SessionAnalysis,
        StepAnalysis,
        analyze,
        import_file,
    )
    from assembler.analysis.fleet import analyze_batch, run_fleet
    from assembler.analysis.reports import analysis_json, analysis_rows
    from assembler.cache.store import CacheStore
    from assembler.sessions.generator import generate_session

# The engine (tokens, cache simulation, prices) and the importers load on first
# use, so that assembling a context does not pay for them.
__getattr__ = lazy_names(__name__, __file__)


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
    "DiagnosticCheck",
    "Environment",
    "Expose",
    "Frame",
    "Layer",
    "Layout",
    "LayoutError",
    "Memory",
    "MemoryState",
    "Miss",
    "Outcome",
    "OutputContract",
    "Placement",
    "Profile",
    "ProviderDiagnostic",
    "RegistrationError",
    "Registry",
    "RenderRange",
    "RequestSettings",
    "Session",
    "SessionAnalysis",
    "SessionAssembler",
    "SessionCosts",
    "SessionError",
    "Skill",
    "Status",
    "Step",
    "StepAnalysis",
    "Tool",
    "TreeOptions",
    "TreeRow",
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
    "call_tree_rows",
    "compare",
    "compare_measured",
    "default_registry",
    "generate_session",
    "import_file",
    "iter_steps",
    "layout_text",
    "lint_session",
    "load_layout",
    "load_session",
    "off_path_calls",
    "parse_session",
    "recommend",
    "register_builtins",
    "render_call_tree",
    "replay",
    "run_fleet",
    "session_costs",
    "to_anthropic",
    "to_openai",
    "tree_rows",
]
