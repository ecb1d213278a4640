"""The comparison with the bill: what the provider measured and billed beside what
the engine simulated, the classes and reasons of each disagreement, the agreement
over one session or many, the billed, simulated and no-cache cost, the bill first with
the simulation beside it, and the factor that scaled sizes to the bill.

Imports: ``design``, ``sessions``, ``cache`` and the engine's public names.
"""

from typing import TYPE_CHECKING

from assembler.lazy import lazy_names

if TYPE_CHECKING:  # the public names; each loads its module when first used
    from assembler.analysis.bill.against_bill import (
        Fidelity,
        continuity_breaks,
        fidelity,
        fidelity_lines,
        hit_bin,
    )
    from assembler.analysis.bill.agreement_summary import Agreement, agreement, agreement_lines
    from assembler.analysis.bill.billed_first import (
        SHOWN_ABOVE,
        BillFirst,
        bill_first,
        bill_first_lines,
        divergence_clause,
        first_divergence,
        sizes_sentence,
        split_sentence,
    )
    from assembler.analysis.bill.billing import (
        SessionCosts,
        billed_cost,
        billed_usd,
        billed_without_cache,
        session_costs,
    )
    from assembler.analysis.bill.measured import (
        MeasuredComparison,
        compare_measured,
        measured_check_json,
    )
    from assembler.analysis.bill.size_scale import scale_note, size_scales

__getattr__ = lazy_names(__name__, __file__)

__all__ = [
    "SHOWN_ABOVE",
    "Agreement",
    "BillFirst",
    "Fidelity",
    "MeasuredComparison",
    "SessionCosts",
    "agreement",
    "agreement_lines",
    "bill_first",
    "bill_first_lines",
    "billed_cost",
    "billed_usd",
    "billed_without_cache",
    "compare_measured",
    "continuity_breaks",
    "divergence_clause",
    "fidelity",
    "fidelity_lines",
    "first_divergence",
    "hit_bin",
    "measured_check_json",
    "scale_note",
    "session_costs",
    "size_scales",
    "sizes_sentence",
    "split_sentence",
]
