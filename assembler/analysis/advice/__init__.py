"""Prediction and advice: which component's text changes under which perturbation
(``lint``), two layouts side by side (``compare``), and the cheapest arrangement,
breakpoints and lifetimes for a session (``recommend``).

Imports: ``design``, ``sessions``, ``cache`` and the engine's public names.
"""

from typing import TYPE_CHECKING

from assembler.lazy import lazy_names

if TYPE_CHECKING:  # the public names; each loads its module when first used
    from assembler.analysis.advice.compare_steps import (
        banner,
        first_divergence,
        pairs,
        side_sentence,
    )
    from assembler.analysis.advice.comparison import Comparison, compare
    from assembler.analysis.advice.lint import LintReport, lint_lines, lint_session
    from assembler.analysis.advice.recommend_text import layout_text
    from assembler.analysis.advice.recommendation import Recommendation, only_recorded, recommend
    from assembler.analysis.advice.recorded_plan import (
        RecordedPlan,
        only_recorded_sessions,
        recommend_recorded,
    )

__getattr__ = lazy_names(__name__, __file__)

__all__ = [
    "Comparison",
    "LintReport",
    "Recommendation",
    "RecordedPlan",
    "banner",
    "compare",
    "first_divergence",
    "layout_text",
    "lint_lines",
    "lint_session",
    "only_recorded",
    "only_recorded_sessions",
    "pairs",
    "recommend",
    "recommend_recorded",
    "side_sentence",
]
