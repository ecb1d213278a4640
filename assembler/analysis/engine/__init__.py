"""The per-step engine: a session under a layout, replayed, assembled and laid on the
wire, then each step's tokens, cache outcome, cost, the miss and its cause.

Holds the layouts, the assembling pipeline, the results the app draws and the
importers with the default tokenizer.

Imports: ``design``, ``sessions`` and ``cache``; nothing else in ``analysis``.
"""
