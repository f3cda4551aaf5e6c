"""Counting periods: a calendar year (or "this" year), or a date range, checked.

>>> period(2026, None, None, this_year=2026)
(datetime.date(2026, 1, 1), datetime.date(2026, 12, 31))
>>> period("this", None, None, this_year=2025)[0]
datetime.date(2025, 1, 1)
>>> period(None, "2026-05-01", "2026-01-01", this_year=2026)
Traceback (most recent call last):
...
workbench.errors.Invalid: --from/--to: the period is impossible: it starts (2026-05-01) after it ends (2026-01-01)
"""

from __future__ import annotations

import datetime as dt

from workbench import records
from workbench.errors import Invalid


def period(
    year: int | str | None, start: str | None, end: str | None, *, this_year: int
) -> tuple[dt.date | None, dt.date | None]:
    """A counting period from a year (or "this") or a date range; Invalid if impossible."""
    if year is not None and (start or end):
        raise Invalid("give a year or a date range, not both")
    if year is not None:
        text = str(year).strip().lower()
        y = this_year if text in ("this", "this year") else None
        if y is None:
            if not text.isdigit() or not 1 <= int(text) <= 9999:
                raise Invalid(f"a year is a number like 2026 (or 'this'), not {year!r}", where="--year")
            y = int(text)
        return dt.date(y, 1, 1), dt.date(y, 12, 31)
    first = dt.date.fromisoformat(records.check_date(start, "--from")) if start else None
    last = dt.date.fromisoformat(records.check_date(end, "--to")) if end else None
    if first and last and first > last:
        raise Invalid(f"the period is impossible: it starts ({first}) after it ends ({last})", where="--from/--to")
    return first, last
