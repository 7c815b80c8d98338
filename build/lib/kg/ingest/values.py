"""Parsers for the loosely typed values in the records and dumps. Pure functions."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal

_NUMBER = re.compile(
    r"^\s*(?P<num>[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?P<pct>%)?\s*$"
)
_PROCEEDING = re.compile(
    r"^\s*(?P<venue>.*?)\s+(?P<year>(?:19|20)\d{2})(?:\s+(?P<month>\d{1,2}))?\s*$"
)


@dataclass(frozen=True)
class MetricValue:
    raw: str
    number: str | None  # canonical xsd:decimal lexical form, when the value is numeric
    percent: bool


def metric_value(raw: str) -> MetricValue:
    """Parse a leaderboard value. The raw string is always kept.

    >>> metric_value("96.95%")
    MetricValue(raw='96.95%', number='96.95', percent=True)
    >>> metric_value("15.8").number
    '15.8'
    >>> metric_value("1,024").number
    '1024'
    >>> metric_value("-").number is None, metric_value("N/A").number is None
    (True, True)
    >>> metric_value("1e-3").number
    '0.001'
    """
    m = _NUMBER.match(raw)
    if not m or not any(ch.isdigit() for ch in m.group("num")):
        return MetricValue(raw, None, False)
    text = m.group("num").replace(",", "")
    number = Decimal(text)  # the regex admits only finite decimal numbers
    lexical = format(number.normalize(), "f")
    return MetricValue(raw, lexical, m.group("pct") is not None)


def iso_date(value: str) -> str | None:
    """The date as YYYY-MM-DD when it is a real calendar date (a time part is dropped).

    >>> iso_date("2020-04-21"), iso_date("2020-13-45"), iso_date("2019-01-05T00:00:00")
    ('2020-04-21', None, '2019-01-05')
    """
    text = value.strip()[:10]
    try:
        return dt.date.fromisoformat(text).isoformat() if len(text) == 10 else None
    except ValueError:
        return None


def iso_datetime(value: str) -> str | None:
    """An xsd:dateTime lexical form, or None.

    >>> iso_datetime("2026-09-25T09:33:49+00:00")
    '2026-09-25T09:33:49+00:00'
    >>> iso_datetime("yesterday") is None
    True
    """
    try:
        parsed = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed.isoformat()


@dataclass(frozen=True)
class Proceeding:
    venue: str
    year: int | None
    month: int | None


def proceeding(value: str) -> Proceeding | None:
    """Split `"EMNLP 2020 11"` into venue, year and month.

    >>> proceeding("EMNLP 2020 11")
    Proceeding(venue='EMNLP', year=2020, month=11)
    >>> proceeding("NeurIPS 2019")
    Proceeding(venue='NeurIPS', year=2019, month=None)
    >>> proceeding("ICLR")
    Proceeding(venue='ICLR', year=None, month=None)
    """
    text = " ".join(value.split())
    if not text:
        return None
    m = _PROCEEDING.match(text)
    if not m or not m.group("venue"):
        return Proceeding(text, None, None)
    month = int(m.group("month")) if m.group("month") else None
    return Proceeding(
        m.group("venue"), int(m.group("year")), month if month and 1 <= month <= 12 else None
    )
