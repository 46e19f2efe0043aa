"""The tool context: one place asks the sandbox, and a tool's failure is a result, not an exception."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kernel.providers.base import ToolDefinition
from kernel.tools import Arguments, LocalTool, ToolArgumentError, ToolContext, ToolResult, authorize
from protocol.errors import INVALID_PARAMS, SANDBOX_DENIED
from sandbox import AccessDeniedError


def test_authorize_returns_the_canonical_path_of_an_allowed_action(env: Any, arun: Any) -> None:
    path = arun(authorize(env.context(), "write", "sub/../new.txt"))
    assert path == f"{env.scratch}/new.txt" and env.asked == []


def test_authorize_raises_a_typed_denial(env: Any, arun: Any) -> None:
    with pytest.raises(AccessDeniedError) as caught:
        arun(authorize(env.context(), "read", "../../bob/memory/MEMORY.md"))
    assert caught.value.code == SANDBOX_DENIED and env.asked == []


def test_authorize_asks_to_read_outside_the_data_dir_and_never_to_write_there(env: Any, arun: Any) -> None:
    env.answer = False
    with pytest.raises(AccessDeniedError):
        arun(authorize(env.context(), "read", "/etc/../etc/motd"))
    assert env.asked == [("read", "/etc/motd")]
    env.answer = True
    with pytest.raises(AccessDeniedError) as caught:
        arun(authorize(env.context(), "write", "/etc/../etc/motd"))
    assert caught.value.code == SANDBOX_DENIED and env.asked == [("read", "/etc/motd")]


def test_arguments_check_types_and_ranges() -> None:
    args = Arguments({"n": 5, "f": 1.0, "b": "yes", "s": "x"})
    assert args.integer("n", 0, low=0, high=10) == 5 and args.integer("f", 0, low=0, high=10) == 1
    for call in (
        lambda: args.integer("n", 0, low=6, high=10),
        lambda: args.flag("b"),
        lambda: args.text("missing"),
        lambda: args.choice("s", ("a", "b"), "a"),
    ):
        with pytest.raises(ToolArgumentError) as caught:
            call()
        assert caught.value.code == INVALID_PARAMS


def test_an_unexpected_failure_becomes_an_error_result_and_is_logged(
    env: Any, arun: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(args: Arguments, ctx: ToolContext) -> ToolResult:
        raise RuntimeError("bug")

    tool = LocalTool(ToolDefinition("broken", "fails", {"type": "object"}), broken)
    with caplog.at_level(logging.ERROR):
        result = arun(tool.run({}, env.context()))
    assert result.is_error and result.content.startswith("error:") and "bug" not in result.content
    assert "broken" in caplog.text
