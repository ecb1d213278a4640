"""The per-step engine: a session under a layout, replayed, assembled and laid on the
wire, then each step's tokens, cache outcome, cost, the miss and its cause.

Holds the layouts, the assembling pipeline, the results the app draws and the
importers with the default tokenizer.

Imports: ``design``, ``sessions`` and ``cache``; nothing else in ``analysis``.
"""

from typing import TYPE_CHECKING

from assembler.lazy import lazy_names

if TYPE_CHECKING:  # the public names; each loads its module when first used
    from assembler.analysis.engine.analyzer import analyze, session_bill
    from assembler.analysis.engine.diagnostics import diagnostic_lines
    from assembler.analysis.engine.importing import import_file, import_session
    from assembler.analysis.engine.layout_text import check_names, full_layout_text
    from assembler.analysis.engine.layouts import (
        BUILTIN_LAYOUTS,
        TTLS,
        ComponentMove,
        Layout,
        LayoutError,
        all_builtin_layouts,
        builtin_layout,
        load_layout,
        parse_layout_text,
    )
    from assembler.analysis.engine.misses import duration_text
    from assembler.analysis.engine.pipeline import (
        AssembledStep,
        SessionAssembler,
        call_tree_rows,
        runs_as_recorded,
    )
    from assembler.analysis.engine.results import (
        BlockAnalysis,
        DiagnosticCheck,
        Miss,
        SessionAnalysis,
        StepAnalysis,
    )
    from assembler.analysis.engine.reuse import freeze_for_reuse, holds_frozen
    from assembler.analysis.engine.wire_request import request_json, wire_format, wire_json

__getattr__ = lazy_names(__name__, __file__)

__all__ = [
    "BUILTIN_LAYOUTS",
    "TTLS",
    "AssembledStep",
    "BlockAnalysis",
    "ComponentMove",
    "DiagnosticCheck",
    "Layout",
    "LayoutError",
    "Miss",
    "SessionAnalysis",
    "SessionAssembler",
    "StepAnalysis",
    "all_builtin_layouts",
    "analyze",
    "builtin_layout",
    "call_tree_rows",
    "check_names",
    "diagnostic_lines",
    "duration_text",
    "freeze_for_reuse",
    "full_layout_text",
    "holds_frozen",
    "import_file",
    "import_session",
    "load_layout",
    "parse_layout_text",
    "request_json",
    "runs_as_recorded",
    "session_bill",
    "wire_format",
    "wire_json",
]
