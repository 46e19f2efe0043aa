"""The switch that takes extraction before a compaction away exists only for measuring: unset it is on."""

from __future__ import annotations

from host.runs.extractor import COVER_SWITCH, cover_mode


def test_extraction_before_a_compaction_is_on_unless_the_switch_says_late_or_off() -> None:
    assert cover_mode({}) == "on"
    assert cover_mode({COVER_SWITCH: "late"}) == "late"
    for off in (" OFF ", "0", "false", "no"):
        assert cover_mode({COVER_SWITCH: off}) == "off", off
    for other in ("", "on", "1", "later"):
        assert cover_mode({COVER_SWITCH: other}) == "on", other
