"""What an analysis returns: per block, per step, per session. The app codes against these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from assembler.cache.prices.price_clock import PriceContext
from assembler.sessions.model import Usage
from assembler.sessions.versions import StoredText
from assembler.sessions.versions import read as read_text


# Never changed once made (a record is shared by the steps whose block and cache
# state it describes); not frozen, as steps make a few each and a frozen dataclass
# costs 2.5x to make (each field set through object.__setattr__); hashable by value.
@dataclass(slots=True, unsafe_hash=True)
class BlockAnalysis:
    name: str
    layer: str  # "L0" | "L1" | "L2"
    section: str  # "tools" | "system" | "messages"
    tokens: int
    cache: str  # "read" | "write" | "uncached"
    change: str  # "new" | "changed" | "unchanged" | "released"
    breakpoint: int | None
    stored: str | StoredText  # the text, or a version kept as a delta (see versions.py)
    cacheable: bool
    marker_ttl: str | None = None  # the breakpoint's own lifetime (5m, 1h); None: the request's

    @property
    def text(self) -> str:
        return read_text(self.stored)


# Never changed once made; not frozen, as most steps make one (see BlockAnalysis).
@dataclass(slots=True, unsafe_hash=True)
class Miss:
    component: str
    layer: str
    reason: str  # content changed | expired | below minimum | model switched | io released | history compacted | ...
    tokens_lost: int
    sentence: str
    cause: str = ""  # the taxonomy code (analysis/causes.py, docs/cache-engine.md)


@dataclass(frozen=True, slots=True)
class DiagnosticCheck:
    """The provider's own cache verdict beside ours."""

    provider: str
    type: str | None  # the provider's type (None: no divergence)
    reason: str | None  # OpenAI's reason within a cache_miss
    missed_tokens: int | None
    ours: str | None  # our cause code, None when we found no miss
    agrees: bool | None  # None: the provider gave no verdict
    sentence: str


# Never changed once made; not frozen, as every step makes one (24 fields set
# through object.__setattr__ cost three times a plain init); with its dict of layer
# tokens it never was hashable.
@dataclass(slots=True)
class StepAnalysis:
    step: int
    label: str | None
    function: str
    call_path: tuple[str, ...]
    depth: int
    timestamp: datetime
    tokens: dict[str, int]  # total, tools, L0, L1, L2 (L0 without the tools)
    read: int
    write: int
    uncached: int
    hit_ratio: float  # read / total
    cached_prefix_tokens: int
    miss: Miss | None
    usd: float
    usd_without_cache: float
    blocks: tuple[BlockAnalysis, ...]
    measured: Usage | None
    provider: str = ""
    model: str = ""
    diagnostic: DiagnosticCheck | None = None
    platform: str = ""  # who served and billed the step (anthropic-bedrock, …)
    write_ttl: str = ""  # the lifetime its writes were simulated and priced with
    inferred: tuple[tuple[str, int], ...] = ()  # (block, tokens) sized from billed usage
    warnings: tuple[str, ...] = ()  # what the simulator warns of (a request the API rejects)
    price_context: PriceContext = ()  # the recorded context its platform's prices apply
    # the factor its model's counted sizes were multiplied by to fit the bill (an imported
    # session analysed as recorded; 1.0 otherwise)
    token_scale: float = 1.0

    @property
    def input_residual(self) -> int | None:
        """The billed input minus the simulated input (read + written + uncached), for a
        step with a bill: what fitting the recorded sizes to the bill left over; ``None``
        without one."""
        m = self.measured
        if m is None:
            return None
        return m.input + m.cache_read + m.cache_write - (self.read + self.write + self.uncached)


@dataclass(frozen=True)
class SessionAnalysis:
    session: str
    layout: str
    provider: str
    model: str
    ttl: str
    approximate_tokens: bool
    steps: tuple[StepAnalysis, ...]
    totals: dict[str, float] = field(default_factory=dict)
    # per model, the factor the recorded sizes were multiplied by to fit the bill
    # (``session.token_scale``, applied when analysed at the recorded provider and model;
    # empty otherwise): "sizes scaled to the bill: ×1.25"
    token_scale: Mapping[str, float] = field(default_factory=dict)
