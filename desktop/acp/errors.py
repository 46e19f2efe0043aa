"""The errors an editor shows: each is an ACP `RequestError` whose message says what happened and what to do.

The code is Hearth's own (`protocol.errors`), so a test or a client can tell them apart: NOT_FOUND for an
unknown agent or session, CONNECTION_CLOSED for a host that cannot be reached or started, and the host's own
code for everything the host refused (PROVIDER_ERROR for a model that cannot be used, with its fix).
"""

from __future__ import annotations

from acp import RequestError

from protocol.errors import (
    CONFLICT,
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    NOT_FOUND,
    PROVIDER_ERROR,
    RUN_FAILED,
    JsonRpcError,
)
from protocol.project_root import FIX

__all__ = [
    "host_refused",
    "host_unreachable",
    "open_elsewhere",
    "refused_folder",
    "run_failed",
    "unknown_agent",
    "unknown_session",
]


def host_unreachable(reason: str) -> RequestError:
    """Hearth's host could neither be reached nor started."""
    return RequestError(
        CONNECTION_CLOSED,
        f"Hearth's host is not reachable: {reason}. Run `hearth host` in a terminal to see why it does not start.",
        {"reason": reason, "fix": "hearth host"},
    )


def unknown_agent(name: str, known: list[str]) -> RequestError:
    """An agent named on the command line, or a session id, that is no agent of this host."""
    have = ", ".join(known) if known else "none yet"
    return RequestError(
        NOT_FOUND,
        f"Hearth has no agent {name!r} (agents: {have}). Create it with `hearth chat {name}`, "
        "or start `hearth acp` without a name to get an agent per project.",
        {"agent": name, "agents": known, "fix": f"hearth chat {name}"},
    )


def unknown_session(session_id: str) -> RequestError:
    """A prompt or cancel for a session this process has not opened (the editor must call session/new or load)."""
    return RequestError(NOT_FOUND, f"no open session {session_id!r}: open it with session/new or session/load first")


def open_elsewhere(agent: str, open_root: str, asked_root: str) -> RequestError:
    """A second session of an agent this process already has open on another project root."""
    fix = f"session/close {agent} first, or open it on {open_root}"
    return RequestError(
        CONFLICT,
        f"{agent} is already open here on {open_root}; a session keeps its project root, so it cannot also be "
        f"opened on {asked_root}. Close that session first, or start another `hearth acp` for the other folder.",
        {"agent": agent, "projectRoot": open_root, "fix": fix},
    )


def refused_folder(cwd: str, reason: str) -> RequestError:
    """A session `cwd` that cannot be a project root."""
    return RequestError(INVALID_PARAMS, f"{reason}; {FIX}", {"cwd": cwd, "reason": reason, "fix": FIX})


def host_refused(exc: JsonRpcError) -> RequestError:
    """A host error as the editor shows it: the host's code and message, which already say what to do."""
    return RequestError(exc.code, exc.message, exc.data)


def run_failed(agent_name: str, message: str, code: int | None) -> RequestError:
    """A run that ended with an error; a model that cannot be used keeps PROVIDER_ERROR and the host's fix."""
    if code == PROVIDER_ERROR:
        fix = f"hearth chat {agent_name} --provider openai --model NAME"
        text = (
            f"{agent_name} has no usable model: {message}. To choose another model run `{fix}` "
            "(or anthropic, or --base-url for a local server)."
        )
        return RequestError(code, text, {"agent": agent_name, "reason": message, "fix": fix})
    return RequestError(
        code if code is not None else RUN_FAILED, f"{agent_name}'s turn failed: {message}", {"agent": agent_name}
    )
