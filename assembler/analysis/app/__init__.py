"""Any input opened as sessions (for the CLI as for the app); what only the app needs:
uploads read and recognised, the history folded for the
step view, line diffs, chart downsampling and the Learn page's walkthrough.

Imports: ``design``, ``sessions``, ``cache`` and the engine's public names.
"""

from typing import TYPE_CHECKING

from assembler.lazy import lazy_names

if TYPE_CHECKING:  # the public names; each loads its module when first used
    from assembler.analysis.app.downsample import MAX_POINTS, extreme_indices
    from assembler.analysis.app.history_view import MIN_FOLD_BLOCKS, Fold, filter_rows, fold_history
    from assembler.analysis.app.inputs import (
        GLOB_CHARS,
        INPUT_SUFFIXES,
        InputError,
        Opened,
        is_many,
        open_one,
        open_session,
        session_names,
    )
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
    "GLOB_CHARS",
    "INPUT_SUFFIXES",
    "LIFETIMES",
    "MAX_POINTS",
    "MIN_FOLD_BLOCKS",
    "POINTS",
    "SESSION",
    "Fold",
    "InputError",
    "Opened",
    "UploadError",
    "counts",
    "date_lines",
    "extreme_indices",
    "filter_rows",
    "fold_history",
    "header_sentence",
    "is_many",
    "learn_points",
    "line_diff",
    "open_one",
    "open_session",
    "read_upload",
    "session_names",
]
