"""The calendar day of a step in the agent's timezone: the date its prompt shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo


@cache
def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (KeyError, ValueError):
        return None


def local_day(at: datetime, timezone: str) -> str:
    """The date of ``at`` in ``timezone`` (an unknown zone: ``at``'s own date)."""
    return _day(at, _zone(timezone))


def _day(at: datetime, zone: ZoneInfo | None) -> str:
    return (at.astimezone(zone) if zone else at).date().isoformat()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_HOUR = timedelta(hours=1)
_LAST_MICROSECOND = _HOUR - timedelta(microseconds=1)


class LocalDays:
    """:func:`local_day` of successive steps, worked out once per hour of UTC time.

    An hour whose first and last instants fall on the same local day at the same UTC
    offset lies wholly in that day: zones change their offset at most once within an
    hour (transitions are months apart). An hour with a midnight or a transition in it,
    and a time without an offset, are converted step by step.
    """

    def __init__(self) -> None:
        self._zone = ""
        self._start = self._end = _EPOCH  # the hour known to lie in one local day
        self._day = ""

    def of(self, at: datetime, timezone: str) -> str:
        try:
            if timezone == self._zone and self._start <= at < self._end:
                return self._day
        except TypeError:  # a time without an offset: the system's local time
            return local_day(at, timezone)
        zone = _zone(timezone)
        if zone is None or at.utcoffset() is None:
            return _day(at, zone)
        start = _EPOCH + (at - _EPOCH) // _HOUR * _HOUR
        first = start.astimezone(zone)
        last = (start + _LAST_MICROSECOND).astimezone(zone)
        if first.date() != last.date() or first.utcoffset() != last.utcoffset():
            return _day(at, zone)
        self._zone, self._start, self._end = timezone, start, start + _HOUR
        self._day = first.date().isoformat()
        return self._day
