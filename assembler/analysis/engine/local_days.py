"""The calendar day of a step in the agent's timezone: the date its prompt shows."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
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
_DAY = timedelta(days=1)
_MICROSECOND = timedelta(microseconds=1)
_MIDNIGHT = time(0)


class LocalDays:
    """:func:`local_day` of successive steps, worked out once per local day.

    A span of UTC time whose first and last instants fall on the same local day at
    the same UTC offset lies wholly in that day: zones change their offset at most
    once within a day (transitions are months apart), so equal offsets at both ends
    mean none in between. The span tried is the step's local day, else (an offset
    change in it) its UTC hour; an hour with a midnight or a transition in it, and a
    time without an offset, are converted step by step.
    """

    def __init__(self) -> None:
        self._zone = ""
        self._start = self._end = _EPOCH  # the span known to lie in one local day
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
        day = at.astimezone(zone).date()
        hour = _EPOCH + (at - _EPOCH) // _HOUR * _HOUR
        for start, end in (
            (_midnight(day, zone), _midnight(day + _DAY, zone)),
            (hour, hour + _HOUR),
        ):
            if start <= at < end:
                first = start.astimezone(zone)
                last = (end - _MICROSECOND).astimezone(zone)
                if first.date() == last.date() == day and first.utcoffset() == last.utcoffset():
                    self._zone, self._start, self._end = timezone, start, end
                    self._day = day.isoformat()
                    return self._day
        return day.isoformat()


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    """The UTC instant of ``day``'s local midnight (the first reading of an ambiguous
    one; a nonexistent one lands after the gap): checked by the caller, not trusted."""
    return datetime.combine(day, _MIDNIGHT, tzinfo=zone).astimezone(UTC)
