"""`hearth chat`'s printer: a model that cannot load is said once, above the prompt, never over it (issue 25.9)."""

from __future__ import annotations

import asyncio

import pytest

from desktop.chat import _Printer
from desktop.chat_input import ChatEvents
from protocol.models.host import AgentEndedEvent
from protocol.models.warmup import ModelStatusEvent

FAILED = ModelStatusEvent(provider="local", state="failed", error="the embedded local model is not installed")


def test_a_model_that_cannot_load_is_said_once_above_the_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    async def main() -> None:
        printer = _Printer(ChatEvents(), interactive=True)
        printer.attach("helper")
        printer.prompt = "you> "
        await printer.on_model_status(FAILED)
        await printer.on_model_status(FAILED)  # a second agent's attempt, or the kernel's restart
        printer.prompt = ""
        printer.run_id = "run-1"
        ended = AgentEndedEvent(agent_id="helper", run_id="run-1", reason="error", error=FAILED.error)
        await printer.on_ended(ended)

    asyncio.run(main())
    out = capsys.readouterr().out
    assert out.count("is not installed") == 1
    # The note clears the prompt's line, goes above it, and the prompt comes back.
    assert out.startswith(
        "\r\x1b[K[the embedded model could not be loaded: the embedded local model is not installed]\nyou> "
    )
    assert "[error: the embedded model could not be loaded (see above)]" in out


def test_piped_output_carries_the_reply_only(capsys: pytest.CaptureFixture[str]) -> None:
    async def main() -> None:
        printer = _Printer(ChatEvents(), interactive=False)
        await printer.on_model_status(FAILED)

    asyncio.run(main())
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "is not installed" in captured.err
