"""The shell's dialogs at the smallest terminal a person uses (80x24): every word of a question is on screen,
and so is every button (issue 25.5: "It leaves the agent's", "Its t")."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Label, Switch

from desktop.shell.dialogs import AgentDialog, ConfirmDialog, HostLostDialog, TextDialog
from desktop.shell.memory_view import MemoryView
from desktop.shell.style import CSS
from tests.desktop.pilot import until
from tests.desktop.test_shell import _shell
from tests.support.host_process import HostProcess, scripted_model

SMALL = (80, 24)
LONG_FACT = "The user lives at 12 Long Street, flat 4, with two cats, a dog and a parrot named Biscuit"


def _shown_words(dialog: ModalScreen[object]) -> list[str]:
    """The words the dialog's question shows on screen, in order (what lies outside the screen is cut)."""
    label = dialog.query_one(".dialog-question", Label)
    screen = dialog.region
    shown = label.region.intersection(screen)
    lines = [strip.text for strip in label.render_lines(label.region.reset_offset)][: shown.height]
    if shown.width < label.region.width:
        lines = [line[: shown.width - (label.region.x - shown.x)] for line in lines]
    return " ".join(lines).split()


def _buttons_on_screen(dialog: ModalScreen[object]) -> bool:
    return all(dialog.region.contains_region(button.region) for button in dialog.query(Button))


class _Bare(App[None]):
    CSS = CSS


@pytest.mark.parametrize(
    "dialog",
    [
        lambda: ConfirmDialog(
            f"Forget “{LONG_FACT}”? It leaves the agent's memory; the audit trail keeps it.", "Forget"
        ),
        lambda: ConfirmDialog(
            f"Erase “{LONG_FACT}” for good? Its text is removed everywhere and cannot come back.",
            "Erase",
            option="also from the conversation's messages",
        ),
        lambda: TextDialog(f"Edit {LONG_FACT}, a question as long as a fact can make it (and confirm it)", LONG_FACT),
        lambda: HostLostDialog("the host process exited with status 1 after its kernel failed to start twice"),
    ],
    ids=["forget", "erase", "edit", "host-lost"],
)
def test_a_long_question_wraps_inside_its_dialog_with_every_word_and_button_on_an_80x24_screen(
    dialog: Callable[[], ModalScreen[Any]],
) -> None:
    async def main() -> None:
        app = _Bare()
        async with app.run_test(size=SMALL) as pilot:
            shown = dialog()
            app.push_screen(shown)
            await pilot.pause()
            question = str(shown.query_one(".dialog-question", Label).render())
            assert _shown_words(shown) == question.split(), "the whole question is on screen"
            assert _buttons_on_screen(shown)

    asyncio.run(main())


def test_the_shells_forget_dialog_shows_the_whole_fact_and_what_forgetting_does_at_80x24(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ann", "settings": scripted_model({"match": ".*", "reply": "ok"})})
            fact = (await host.call("memory.note", {"agentId": "ann", "text": LONG_FACT + "."}))["record"]
            async with _shell(tmp_path, "ann", size=SMALL) as (app, pilot):
                await pilot.press("f4")
                memory = app.query_one(MemoryView)
                await until(pilot, lambda: fact["id"] in memory.records)
                table = app.query_one("#facts", DataTable)
                table.move_cursor(row=table.get_row_index(fact["id"]))
                for key in ("r", "z"):
                    await pilot.press(key)
                    await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
                    words = _shown_words(app.screen)
                    said = " ".join(words)
                    assert LONG_FACT in said and re.search(r"(audit trail keeps it|cannot come back)\.$", said), said
                    assert _buttons_on_screen(app.screen)
                    await pilot.press("n")
                    await until(pilot, lambda: not isinstance(app.screen, ConfirmDialog))
            current = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            assert [r["id"] for r in current["records"]] == [fact["id"]], "answering no kept the fact"

    asyncio.run(main())


def test_the_settings_dialog_turns_knowledge_off_and_on_with_every_switch_and_button_on_an_80x24_screen(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Ann", "settings": scripted_model({"match": ".*", "reply": "ok"})})

            async def knowledge_on() -> bool:
                return bool((await host.call("knowledge.list", {"agentId": "ann"}))["on"])

            async with _shell(tmp_path, "ann", size=SMALL) as (app, pilot):

                async def save(*, turn_knowledge: bool) -> None:
                    await pilot.press("ctrl+s")
                    await until(pilot, lambda: isinstance(app.screen, AgentDialog))
                    dialog = app.screen
                    for switch in ("#memory", "#knowledge"):
                        assert dialog.region.contains_region(dialog.query_one(switch, Switch).region)
                    assert _buttons_on_screen(dialog)
                    if turn_knowledge:
                        was = dialog.query_one("#knowledge", Switch).value
                        await pilot.click("#knowledge")
                        await until(pilot, lambda: dialog.query_one("#knowledge", Switch).value is not was)
                    await pilot.press("ctrl+s")
                    await until(pilot, lambda: not isinstance(app.screen, AgentDialog))

                await save(turn_knowledge=False)
                await until(pilot, lambda: app.agents["ann"].info.settings.knowledge is True)
                assert await knowledge_on(), "saving without touching the switch leaves knowledge on"
                await save(turn_knowledge=True)
                await until(pilot, lambda: app.agents["ann"].info.settings.knowledge is False)
                assert not await knowledge_on()
                assert app.agents["ann"].info.settings.memory is True, "the memory switch stays as it was"
                await save(turn_knowledge=True)
                await until(pilot, lambda: app.agents["ann"].info.settings.knowledge is True)
                assert await knowledge_on()

    asyncio.run(main())
