"""Time zones on the wire: an IANA name (`Europe/Berlin`) that this machine's zone database knows."""

from __future__ import annotations

import zoneinfo

__all__ = ["check_time_zone"]


def check_time_zone(value: str | None) -> str | None:
    """A validator: `value` unchanged when it names a known zone (or is None).

    Raises:
        ValueError: no zone of that name.
    """
    if value is None:
        return None
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {value!r}") from exc
    return value
