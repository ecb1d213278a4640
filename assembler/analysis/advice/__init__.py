"""Prediction and advice: which component's text changes under which perturbation
(``lint``), two layouts side by side (``compare``), and the cheapest arrangement,
breakpoints and lifetimes for a session (``recommend``).

Imports: ``design``, ``sessions``, ``cache`` and the engine's public names.
"""
