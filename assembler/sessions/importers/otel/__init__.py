"""The ``otel`` format: an OTLP JSON export of model-call spans read into a session with
measured usage (``traces``), the spans and their attributes read under each convention
(``spans``).

Imports: the sibling importer modules (records, history) and :mod:`assembler.limits`.
"""

from __future__ import annotations

from assembler.sessions.importers.otel.traces import import_otel

__all__ = ["import_otel"]
