"""What only the app needs: uploads read and recognised, the history folded for the
step view, line diffs, chart downsampling and the Learn page's walkthrough.

Imports: ``design``, ``sessions``, ``cache`` and the engine's public names.
"""

from typing import TYPE_CHECKING

from assembler.lazy import lazy_names

if TYPE_CHECKING:  # the public names; each loads its module when first used
    from assembler.analysis.app.downsample import MAX_POINTS, extreme_indices
    from assembler.analysis.app.history_view import MIN_FOLD_BLOCKS, Fold, filter_rows, fold_history
    from assembler.analysis.app.text_diff import counts, line_diff
    from assembler.analysis.app.uploads import UploadError, read_upload
    from assembler.analysis.app.walkthrough import (
        LIFETIMES,
        POINTS,
        SESSION,
        date_lines,
        header_sentence,
        learn_points,
    )

__getattr__ = lazy_names(__name__, __file__)

__all__ = [
    "LIFETIMES",
    "MAX_POINTS",
    "MIN_FOLD_BLOCKS",
    "POINTS",
    "SESSION",
    "Fold",
    "UploadError",
    "counts",
    "date_lines",
    "extreme_indices",
    "filter_rows",
    "fold_history",
    "header_sentence",
    "learn_points",
    "line_diff",
    "read_upload",
]
