"""Analysis: a session under a layout, step by step, and what is made of it, in six
parts — ``engine`` (the per-step engine), ``bill`` (the comparison with the bill),
``advice`` (lint, compare, recommend), ``reports`` (JSON, rows, Parquet, OTLP,
JUnit), ``fleet`` (many sessions) and ``app`` (what only the app needs). Each is
used by the names its ``__init__`` lists, never by its modules.

Imports: ``design``, ``sessions`` and ``cache``; never ``cli``. Within, the engine
imports none of the others (contracts in pyproject.toml).
"""
