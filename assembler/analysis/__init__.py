"""Analysis: a session under a layout, step by step — tokens, cache outcome,
the miss and its cause, cost — plus measured-vs-simulated, compare, layouts,
batch runs and the JSON / rows / JUnit reports.

Imports: ``design``, ``sessions`` and ``cache``; never ``cli``.
"""
