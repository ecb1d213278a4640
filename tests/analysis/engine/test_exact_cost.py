"""A step's cost summed in integers gives the float of the decimal sum, digit for digit.

:meth:`StepPricer.cost` sums the rates as integers over one power of ten when
every decimal step of the sum would be exact; the true division of two integers
is correctly rounded, as ``float`` of a decimal is, so both give the same float.
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.block_records import common_length
from assembler.cache.prices.pricing import _Rates, _usd

# per-million prices as the package ships them, and per-token rates of many digits
# (a tiered price's rates are divisions that need not terminate)
_RATE = st.one_of(
    st.decimals(min_value=0, max_value=100, places=4).map(lambda d: d / Decimal(10**6)),
    st.builds(lambda a, b: Decimal(a) / Decimal(b), st.integers(0, 10**7), st.integers(1, 10**6)),
)
_COUNT = st.integers(0, 10**9)


@given(st.lists(_RATE, min_size=5, max_size=5), _COUNT, _COUNT, _COUNT, _COUNT, st.data())
@settings(max_examples=500, deadline=None)
def test_the_integer_sum_is_the_decimal_sum(
    rates: list[Decimal], read: int, write: int, uncached: int, output: int, data: st.DataObject
) -> None:
    r = _Rates(*rates)
    assert r.scaled is not None
    i, rd, wr, wr_1h, out, unit, limit = r.scaled
    hour = data.draw(st.integers(0, write))
    total = read + write + uncached
    if total >= limit or output >= limit:
        return  # the pricer sums these in decimals
    whole = (i * uncached + rd * read + wr * (write - hour) + wr_1h * hour + out * output) / unit
    assert whole == float(_usd(r, total, read, write, hour, output))
    assert (i * total + out * output) / unit == float(_usd(r, total, 0, 0, 0, output))


def test_rates_with_a_sign_or_no_value_are_summed_in_decimals() -> None:
    one = Decimal("0.000003")
    assert _Rates(one, one, one, one, Decimal("-0")).scaled is None
    assert _Rates(one, one, one, Decimal("NaN"), one).scaled is None


@given(
    st.lists(st.integers(0, 3), max_size=12),
    st.lists(st.integers(0, 3), max_size=12),
    st.integers(0, 14),
)
def test_common_length_is_the_first_difference_within_the_limit(
    a: list[int], b: list[int], limit: int
) -> None:
    n = min(limit, len(a), len(b))
    expected = next((k for k in range(n) if a[k] != b[k]), n)
    assert common_length(a, b, limit) == expected
