"""Parsers for the loosely typed values in the records and dumps. Pure functions."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal

#: A number as leaderboards write it: sign, digits with optional comma groups or one comma,
#: fraction, exponent; then an optional K/M/B suffix or a percent sign.
_NUMBER = re.compile(
    r"^(?P<num>[+-]?(?:\d+(?:,\d+)*)?(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*"
    r"(?:(?P<scale>[kKMB])|(?P<pct>%))?$"
)
_PLUS_MINUS = re.compile(r"^(?P<mean>[^±]+?)\s*(?:±|\+/-|\+-)\s*(?P<spread>[^±]+)$")
_SCALE = {"k": 3, "K": 3, "M": 6, "B": 9}
#: The largest power of ten a value is read as a number at (1e309, beyond a float, still is).
MAX_EXPONENT = 1000
#: Characters that carry no meaning around a value: spaces, a byte-order mark, markdown bold.
_STRIP = " \t\r\n\ufeff\u00a0"
_PROCEEDING = re.compile(
    r"^\s*(?P<venue>.*?)\s+(?P<year>(?:19|20)\d{2})(?:\s+(?P<month>\d{1,2}))?\s*$"
)


@dataclass(frozen=True)
class MetricValue:
    raw: str
    number: str | None  # canonical xsd:decimal lexical form, when the reading is unambiguous
    percent: bool
    spread: str | None = None  # the "± y" of "x ± y", as a decimal, when there is one


def _decimal(text: str) -> tuple[str, bool] | None:
    """One number as leaderboards write it, as (xsd:decimal lexical form, is a percentage);
    None when it is not one number or its reading is ambiguous (see `metric_value`)."""
    core = text.strip(_STRIP)
    if core.startswith("**") and core.endswith("**") and len(core) > 4:
        core = core[2:-2].strip(_STRIP)  # markdown bold: "**55.6**"
    m = _NUMBER.match(core)
    if not m or not any(ch.isdigit() for ch in m.group("num")):
        return None
    num = m.group("num")
    if "," in num:
        groups = num.lstrip("+-").split(".")[0].split(",")
        if "." not in num and len(groups) == 2 and len(groups[1]) != 3:
            num = num.replace(",", ".")  # "37,7": a decimal comma, no thousands meant
        elif (
            len(groups[0]) <= 3
            and all(len(g) == 3 for g in groups[1:])
            and (len(groups) > 2 or "." in num)
        ):
            num = num.replace(",", "")  # "1,514,187", "1,400.5": thousands separators
        else:
            return None  # "2,200", "7,537": thousands or a decimal comma? ambiguous
    number = Decimal(num)  # the regex admits only finite decimal numbers: never NaN/Infinity
    if abs(number.adjusted()) > MAX_EXPONENT:
        return None  # "1e9999999": no measure is that; its digits would fill the store
    scale = m.group("scale")
    if scale:
        number = number.scaleb(_SCALE[scale])
    lexical = format(number.normalize(), "f")
    if "." in lexical:
        lexical = lexical.rstrip("0").rstrip(".")
    return lexical, m.group("pct") is not None


def metric_value(raw: str) -> MetricValue:
    """Parse a leaderboard value. The raw string is always kept; `number` is set only when
    the reading is unambiguous (docs/dumps.md lists every shape in the real slices).

    >>> metric_value("96.95%")
    MetricValue(raw='96.95%', number='96.95', percent=True, spread=None)
    >>> metric_value("15.8").number, metric_value(" 0.8784").number, metric_value(".931").number
    ('15.8', '0.8784', '0.931')
    >>> metric_value("0.57 ± 0.23")
    MetricValue(raw='0.57 ± 0.23', number='0.57', percent=False, spread='0.23')
    >>> metric_value("1.2M").number, metric_value("580k").number, metric_value("0.8B").number
    ('1200000', '580000', '800000000')
    >>> metric_value("37,7").number, metric_value("1,514,187").number
    ('37.7', '1514187')
    >>> metric_value("2,200").number is None  # 2200 or 2.2?
    True
    >>> [metric_value(v).number for v in ("-", "N/A", "NaN", "Infinity", "-inf", "54.60/55.55")]
    [None, None, None, None, None, None]
    >>> metric_value("1e-3").number, metric_value("**55.6**").number
    ('0.001', '55.6')
    >>> len(metric_value("1e309").number), metric_value("1e9999999").number
    (310, None)
    """
    pm = _PLUS_MINUS.match(raw.strip(_STRIP))
    if pm:
        mean, spread = _decimal(pm.group("mean")), _decimal(pm.group("spread"))
        if mean is None or spread is None or (spread[1] and not mean[1]):
            return MetricValue(raw, None, False)
        return MetricValue(raw, mean[0], mean[1], spread[0])
    parsed = _decimal(raw)
    if parsed is None:
        return MetricValue(raw, None, False)
    return MetricValue(raw, parsed[0], parsed[1])


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
