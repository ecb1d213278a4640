"""Outputs in other formats: the analysis as JSON, flat rows, Parquet tables, OTLP
spans and JUnit, and the notes a text report prints beside its table.

Imports: ``design``, ``sessions``, ``cache`` and the public names of the engine,
the bill and advice.
"""

from typing import TYPE_CHECKING

from assembler.lazy import lazy_names

if TYPE_CHECKING:  # the public names; each loads its module when first used
    from assembler.analysis.reports.junit import CaseResult, junit_xml, write_junit
    from assembler.analysis.reports.otlp_spans import otlp_line
    from assembler.analysis.reports.parquet_tables import write_session_tables
    from assembler.analysis.reports.report_json import (
        analysis_json,
        rules_lines,
        write_analysis_json,
    )
    from assembler.analysis.reports.report_rows import ROW_COLUMNS, analysis_rows
    from assembler.analysis.reports.step_notes import priced_as_lines

__getattr__ = lazy_names(__name__, __file__)

__all__ = [
    "ROW_COLUMNS",
    "CaseResult",
    "analysis_json",
    "analysis_rows",
    "junit_xml",
    "otlp_line",
    "priced_as_lines",
    "rules_lines",
    "write_analysis_json",
    "write_junit",
    "write_session_tables",
]
