"""The `hearth` command: argument parsing only. Each subcommand names one function, imported when it runs.

Nothing heavy is imported at module level (no pydantic, no wire models), so `hearth --help` answers at once.
"""

from __future__ import annotations

import argparse
import logging
import sys

__all__ = ["build_parser", "main"]

MEMORY_VIEWS = ["current", "conflicts", "proposed", "all", "retracted"]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", help="where Hearth keeps its state (default: $HEARTH_HOME or the user data dir)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail to stderr")


def _host(args: argparse.Namespace) -> int:
    """Run the host on this process's stdio."""
    from host.app import host_main

    return host_main(args.data_dir)


def _chat(args: argparse.Namespace) -> int:
    from desktop.chat import ChatOptions, run_chat

    return run_chat(
        ChatOptions(
            agent=args.agent,
            data_dir=args.data_dir,
            provider=args.provider,
            model=args.model,
            base_url=args.base_url,
            key_secret=args.key_secret,
            verbose=args.verbose,
        )
    )


def _secrets(args: argparse.Namespace) -> int:
    from desktop.secrets_cmd import run_secrets
    from protocol.datadir import resolve_data_dir

    return run_secrets(args.action, getattr(args, "name", None), resolve_data_dir(args.data_dir))


def _memory(args: argparse.Namespace) -> int:
    from desktop.memory_cmd import MemoryCommand, run_memory_command
    from protocol.datadir import resolve_data_dir

    return run_memory_command(
        MemoryCommand(
            action=args.action,
            agent=args.agent,
            data_dir=resolve_data_dir(args.data_dir),
            view=getattr(args, "view", "current"),
            record_id=getattr(args, "record_id", None),
            decision=getattr(args, "decision", None),
            text=getattr(args, "text", None),
            reason=getattr(args, "reason", None),
        )
    )


def _mcp(args: argparse.Namespace) -> int:
    from desktop.mcp_cmd import McpCommand, run_mcp_command
    from protocol.datadir import resolve_data_dir

    return run_mcp_command(
        McpCommand(
            action=args.action,
            agent=args.agent,
            data_dir=resolve_data_dir(args.data_dir),
            name=getattr(args, "name", None),
            command=getattr(args, "server_command", []),
            env=getattr(args, "env", []),
            secret_env=getattr(args, "secret_env", []),
            tools=getattr(args, "tool", []),
            network=getattr(args, "network", False),
        )
    )


def _export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from desktop.archive_cmd import run_export
    from protocol.datadir import resolve_data_dir

    return run_export(args.agent, Path(args.file), resolve_data_dir(args.data_dir))


def _import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from desktop.archive_cmd import run_import
    from protocol.datadir import resolve_data_dir

    return run_import(Path(args.file), resolve_data_dir(args.data_dir), args.agent_id)


def _schema(args: argparse.Namespace) -> int:
    from protocol.schema import schema_json

    text = schema_json()
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _add_chat(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chat = commands.add_parser("chat", help="Chat with an agent in the terminal (creates it if missing).")
    _common(chat)
    chat.add_argument("agent", help="the agent's id (or a new name)")
    chat.add_argument(
        "--provider",
        choices=["local", "openai", "anthropic", "scripted"],
        help="model provider; the default, local, is a tiny embedded model for trying Hearth out, not for real work",
    )
    chat.add_argument("--model", help="model name, e.g. gpt-4o-mini or claude-sonnet-4-5")
    chat.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama")
    chat.add_argument("--key-secret", help="the name of the stored secret holding the API key")
    chat.set_defaults(func=_chat)


def _add_secrets(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    secrets = commands.add_parser("secrets", help="Store, list or delete provider API keys (never printed).")
    actions = secrets.add_subparsers(dest="action", required=True)
    for action, help_text, takes_name in (
        ("set", "Store a key (read without echo).", True),
        ("list", "List the names of stored keys.", False),
        ("delete", "Delete a stored key.", True),
    ):
        action_parser = actions.add_parser(action, help=help_text)
        _common(action_parser)
        if takes_name:
            action_parser.add_argument("name")
        action_parser.set_defaults(func=_secrets)


def _add_memory(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    memory = commands.add_parser("memory", help="See and govern what an agent remembers.")
    actions = memory.add_subparsers(dest="action", required=True)

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        action_parser = actions.add_parser(name, help=help_text)
        _common(action_parser)
        action_parser.add_argument("agent", help="the agent's id")
        action_parser.set_defaults(func=_memory)
        return action_parser

    action("list", "List a view of the agent's memory.").add_argument("--view", default="current", choices=MEMORY_VIEWS)
    review = action("review", "Confirm, reject or edit a proposed fact.")
    review.add_argument("record_id")
    review.add_argument("decision", choices=["confirm", "reject", "edit"])
    review.add_argument("--text", help="the corrected text, for edit")
    for name, help_text in (
        ("forget", "Retract a fact (the audit trail keeps it)."),
        ("erase", "Erase a fact's text for good (the audit keeps that it existed)."),
    ):
        with_id = action(name, help_text)
        with_id.add_argument("record_id")
        with_id.add_argument("--reason")
    action("why", "Say why memory holds a fact: its source, evidence, reviews and history.").add_argument("record_id")
    action("verify", "Re-walk the ledger's hash chain.")


def _add_mcp(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser("mcp", help="Give an agent MCP servers (each runs inside the agent's sandbox).")
    actions = mcp.add_subparsers(dest="action", required=True)
    parsers = {}
    for name, help_text in (
        ("add", "Add a server: hearth mcp add AGENT NAME [options] -- COMMAND ARGS..."),
        ("list", "List the agent's servers and their state."),
        ("remove", "Remove a server."),
    ):
        parsers[name] = actions.add_parser(name, help=help_text)
        _common(parsers[name])
        parsers[name].add_argument("agent", help="the agent's id")
        if name != "list":
            parsers[name].add_argument("name", help="the server's name: lowercase letters, digits and -")
        parsers[name].set_defaults(func=_mcp)
    add = parsers["add"]
    add.add_argument("--env", action="append", default=[], metavar="VAR=VALUE", help="an environment variable")
    add.add_argument("--secret-env", action="append", default=[], metavar="VAR=SECRET", help="a stored secret as VAR")
    add.add_argument("--tool", action="append", default=[], help="offer only this tool (repeat; default all)")
    add.add_argument("--network", action="store_true", help="let the server use the network")
    add.add_argument("server_command", nargs="+", metavar="COMMAND", help="after --: the program and its arguments")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hearth", description="Hearth: a local host for persistent AI agents.")
    commands = parser.add_subparsers(dest="command", required=True)

    host = commands.add_parser("host", help="Run the host, speaking JSON-RPC on stdio (what a desktop shell launches).")
    _common(host)
    host.set_defaults(func=_host)
    _add_chat(commands)
    _add_secrets(commands)
    _add_memory(commands)
    _add_mcp(commands)

    export = commands.add_parser("export", help="Write an agent (profile, settings, transcript, memory) to one file.")
    _common(export)
    export.add_argument("agent", help="the agent's id")
    export.add_argument("file", help="the archive to write (never over an existing file)")
    export.set_defaults(func=_export)
    imported = commands.add_parser("import", help="Make an agent of an archive written by `hearth export`.")
    _common(imported)
    imported.add_argument("file", help="the archive")
    imported.add_argument("--agent-id", help="import under this id instead of the one in the archive")
    imported.set_defaults(func=_import)
    schema = commands.add_parser("schema", help="Print the JSON Schema of every method and event.")
    schema.add_argument("--out", help="write to this file instead of stdout")
    schema.set_defaults(func=_schema, verbose=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # watchfiles reports every batch of file changes at INFO.
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    code: int = args.func(args)
    return code
