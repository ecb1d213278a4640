"""Outputs in other formats: the analysis as JSON, flat rows, Parquet tables, OTLP
spans and JUnit, and the notes a text report prints beside its table.

Imports: ``design``, ``sessions``, ``cache`` and the public names of the engine,
the bill and advice.
"""
