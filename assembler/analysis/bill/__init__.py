"""The comparison with the bill: what the provider measured and billed beside what
the engine simulated, the classes and reasons of each disagreement, the agreement
over one session or many, and the billed, simulated and no-cache cost.

Imports: ``design``, ``sessions``, ``cache`` and the engine's public names.
"""
