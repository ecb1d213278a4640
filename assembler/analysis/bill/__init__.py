"""The comparison with the bill: what the provider measured and billed beside what
the engine simulated, the classes and reasons of each disagreement, the agreement
over one session or many, and the billed, simulated and no-cache cost.

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
    from assembler.analysis.bill.billing import SessionCosts, billed_cost, billed_usd, session_costs
    from assembler.analysis.bill.measured import (
        MeasuredComparison,
        compare_measured,
        measured_check_json,
    )

__getattr__ = lazy_names(__name__, __file__)

__all__ = [
    "Agreement",
    "Fidelity",
    "MeasuredComparison",
    "SessionCosts",
    "agreement",
    "agreement_lines",
    "billed_cost",
    "billed_usd",
    "compare_measured",
    "continuity_breaks",
    "fidelity",
    "fidelity_lines",
    "hit_bin",
    "measured_check_json",
    "session_costs",
]
