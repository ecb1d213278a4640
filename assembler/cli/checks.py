"""Checks of the arguments several commands share: ``--provider`` / ``--model`` and ``--step``.

Each failure is one line naming the file, the flag and what was expected, raised as a
:class:`UsageError` that ``cli.main`` turns into exit status 2.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from assembler.errors import UsageError, provider_error
from assembler.sessions.replay import Step, find_step

LABELS_SHOWN = 3  # a hint, not a listing: `steps` prints them all


def check_provider_model(source: str, provider: str | None, model: str | None) -> None:
    """``--provider`` (and ``--model`` with it), before any session is read.

    Without ``--provider`` the model is billed under each session's own provider, so
    :func:`provider_errors` checks it once the session is read."""
    if not provider:
        return
    from assembler.cache.prices.pricing import PROVIDER_IDS, check_model
    from assembler.cache.providers import normalize_provider

    with provider_errors(source, provider, model):
        named = provider.lower()
        pid = named if named in PROVIDER_IDS else normalize_provider(named)
        if model:
            check_model(pid, model)


@contextmanager
def provider_errors(source: str, provider: str | None, model: str | None) -> Iterator[None]:
    """A provider or model error inside names ``source`` and the flag (or session field);
    other errors pass as they are."""
    from assembler.cache.prices.pricing import PricingError
    from assembler.cache.providers import UnknownProvider

    try:
        yield
    except (PricingError, UnknownProvider) as exc:
        message = provider_error(
            source, str(exc), provider_given=bool(provider), model_given=bool(model)
        )
        raise UsageError(message) from None


def pick_step(source: str, steps: Sequence[Step], selector: str) -> Step:
    """``--step``: a 1-based number or a label, else what was expected."""
    try:
        return find_step(list(steps), selector)
    except ValueError as exc:
        if selector.isascii() and selector.isdigit():  # a number out of range: said as is
            raise UsageError(f"{source}: --step: {exc}") from None
    labels = list(dict.fromkeys(s.label for s in steps if s.label))
    if labels:
        shown = ", ".join(labels[:LABELS_SHOWN]) + (", …" if len(labels) > LABELS_SHOWN else "")
        expected = f"a step number 1 to {len(steps)} or a label ({shown})"
    else:
        expected = f"a step number 1 to {len(steps)} (the session has no labelled steps)"
    raise UsageError(f"{source}: --step: expected {expected}, found {selector!r}")
