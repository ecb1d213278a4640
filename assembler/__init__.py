"""Context Assembly Inspector: three-layer, registry-based LLM context assembly.

The public surface. Everything else is an implementation detail.
"""

from typing import TYPE_CHECKING

from assembler.analysis.layouts import (
    BUILTIN_LAYOUTS,
    Layout,
    LayoutError,
    builtin_layout,
    load_layout,
)
from assembler.analysis.pipeline import AssembledStep, SessionAssembler, call_tree_rows
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
    from assembler.analysis.batch import analyze_batch
    from assembler.analysis.billing import SessionCosts, session_costs
    from assembler.analysis.compare import Comparison, compare
    from assembler.analysis.engine import analyze
    from assembler.analysis.fleet import run_fleet
    from assembler.analysis.importing import import_file
    from assembler.analysis.inputs import open_session, session_names
    from assembler.analysis.lint import lint_session
    from assembler.analysis.measured import compare_measured
    from assembler.analysis.recommend import recommend
    from assembler.analysis.recommend_text import layout_text
    from assembler.analysis.report_json import analysis_json
    from assembler.analysis.report_rows import analysis_rows
    from assembler.analysis.results import (
        BlockAnalysis,
        DiagnosticCheck,
        Miss,
        SessionAnalysis,
        StepAnalysis,
    )
    from assembler.cache.store import CacheStore
    from assembler.sessions.generator import generate_session
    from assembler.sessions.importers.exchange import read_exchange

# The engine (tokens, cache simulation, prices) and the importers load on first
# use, so that assembling a context does not pay for them.
_LAZY = {
    "analyze": "assembler.analysis.engine",
    "compare": "assembler.analysis.compare",
    "analysis_json": "assembler.analysis.report_json",
    "analysis_rows": "assembler.analysis.report_rows",
    "SessionAnalysis": "assembler.analysis.results",
    "StepAnalysis": "assembler.analysis.results",
    "BlockAnalysis": "assembler.analysis.results",
    "Miss": "assembler.analysis.results",
    "DiagnosticCheck": "assembler.analysis.results",
    "Comparison": "assembler.analysis.compare",
    "CacheStore": "assembler.cache.store",
    "compare_measured": "assembler.analysis.measured",
    "analyze_batch": "assembler.analysis.batch",
    "session_costs": "assembler.analysis.billing",
    "SessionCosts": "assembler.analysis.billing",
    "import_file": "assembler.analysis.importing",
    "open_session": "assembler.analysis.inputs",
    "session_names": "assembler.analysis.inputs",
    "read_exchange": "assembler.sessions.importers.exchange",
    "generate_session": "assembler.sessions.generator",
    "lint_session": "assembler.analysis.lint",
    "run_fleet": "assembler.analysis.fleet",
    "recommend": "assembler.analysis.recommend",
    "layout_text": "assembler.analysis.recommend_text",
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
    "open_session",
    "parse_session",
    "read_exchange",
    "recommend",
    "register_builtins",
    "render_call_tree",
    "replay",
    "run_fleet",
    "session_costs",
    "session_names",
    "to_anthropic",
    "to_openai",
    "tree_rows",
]
