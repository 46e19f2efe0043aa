"""The `hearth` command: argument parsing only. Each subcommand names one function, imported when it runs.

Nothing heavy is imported at module level (no pydantic, no wire models, no Textual), so `hearth --help`
answers at once (`python scripts/bench_cli.py` measures it). `hearth` alone opens the desktop shell.
`--data-dir` and `-v` are accepted before or after the subcommand.
"""

from __future__ import annotations

import argparse
import logging
import sys

# Names for the annotations only: nothing beyond argparse is imported when the command starts.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

__all__ = ["build_parser", "main", "normalize_memory_order"]

MEMORY_VIEWS = ["current", "conflicts", "proposed", "all", "retracted"]
MEMORY_ACTIONS = ("list", "conflicts", "review", "history", "why", "verify", "export", "forget", "erase")
_TAKES_VALUE = {"--data-dir", "--view", "--text", "--reason", "--out", "--port"}


class _Version(argparse.Action):
    """`--version`, looked up only when asked for (reading package metadata is not free)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print Hearth's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from protocol.version import hearth_version  # the protocol package loads its names on first use

        print(f"hearth {hearth_version()}")
        parser.exit()


def _common(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    # Below the top level the defaults are SUPPRESS, so a flag given before the subcommand is not reset.
    parser.add_argument(
        "--data-dir",
        default=None if top else argparse.SUPPRESS,
        help="where Hearth keeps its state (default: $HEARTH_HOME or the user data dir)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", default=False if top else argparse.SUPPRESS, help="log debug detail"
    )


def _json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", dest="as_json", help="print JSON for scripts")


def _data_dir(args: argparse.Namespace) -> Path:
    from protocol.datadir import resolve_data_dir

    return resolve_data_dir(args.data_dir)


def _shell(args: argparse.Namespace) -> int:
    """Open the desktop shell."""
    from desktop.shell import run_shell

    return run_shell(_data_dir(args), verbose=args.verbose)


def _host(args: argparse.Namespace) -> int:
    from host.app import host_main

    return host_main(args.data_dir, args.idle_exit)


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


def _agents(args: argparse.Namespace) -> int:
    from desktop.inspect_cmd import run_agents

    return run_agents(_data_dir(args), args.as_json)


def _inspect(args: argparse.Namespace) -> int:
    from desktop.inspect_cmd import run_inspect

    return run_inspect(_data_dir(args), args.agent, args.as_json, args.run)


def _web(args: argparse.Namespace) -> int:
    from desktop.web import run_web

    return run_web(_data_dir(args), port=args.port)


def _secrets(args: argparse.Namespace) -> int:
    from desktop.secrets_cmd import run_secrets

    return run_secrets(args.action, getattr(args, "name", None), _data_dir(args))


def _memory(args: argparse.Namespace) -> int:
    from desktop.memory_cmd import MemoryCommand, run_memory_command

    return run_memory_command(
        MemoryCommand(
            action=args.action,
            agent=args.agent,
            data_dir=_data_dir(args),
            view=getattr(args, "view", "current"),
            record_id=getattr(args, "record_id", None),
            decision=getattr(args, "decision", None),
            text=getattr(args, "text", None),
            reason=getattr(args, "reason", None),
            as_json=getattr(args, "as_json", False),
            out=getattr(args, "out", None),
            scrub_conversation=getattr(args, "scrub_conversation", False),
        )
    )


def _knowledge(args: argparse.Namespace) -> int:
    from desktop.knowledge_cmd import KnowledgeCommand, run_knowledge_command

    return run_knowledge_command(
        KnowledgeCommand(
            action=args.action,
            owner=args.owner,
            data_dir=_data_dir(args),
            work=args.work,
            paths=getattr(args, "paths", []),
            pattern=getattr(args, "pattern", None),
            source_id=getattr(args, "source_id", None),
            suggestion_id=getattr(args, "suggestion_id", None),
            query=" ".join(getattr(args, "query", [])),
            limit=getattr(args, "limit", 8),
            wait=not getattr(args, "no_wait", False),
            as_json=getattr(args, "as_json", False),
        )
    )


def _mcp_serve(args: argparse.Namespace) -> int:
    """Serve an agent's memory and knowledge to another tool over MCP on stdio."""
    from desktop.mcp_serve import McpServeOptions, run_mcp_serve

    return run_mcp_serve(McpServeOptions(agent=args.agent, data_dir=_data_dir(args), verbose=args.verbose))


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


def _schedule(args: argparse.Namespace) -> int:
    from desktop.schedule_cmd import ScheduleCommand, run_schedule_command

    return run_schedule_command(
        ScheduleCommand(
            action=args.action,
            agent=args.agent,
            data_dir=_data_dir(args),
            schedule_id=getattr(args, "schedule_id", None),
            message=getattr(args, "message", None),
            at=getattr(args, "at", None),
            every=getattr(args, "every", None),
            cron=getattr(args, "cron", None),
            label=getattr(args, "label", ""),
            when_busy=getattr(args, "when_busy", "skip"),
            missed=getattr(args, "missed", "once"),
            watch=getattr(args, "watch", None),
            work=getattr(args, "work", None),
            as_json=getattr(args, "as_json", False),
        )
    )


def _budget(args: argparse.Namespace) -> int:
    from desktop.schedule_cmd import BudgetCommand, run_budget_command

    return run_budget_command(
        BudgetCommand(
            agent=args.agent,
            data_dir=_data_dir(args),
            tokens=args.tokens,
            requests=args.requests,
            clear=args.clear,
            work=args.work,
            as_json=args.as_json,
        )
    )


def _export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from desktop.archive_cmd import run_export
    from protocol.datadir import resolve_data_dir

    return run_export(args.agent, Path(args.file), resolve_data_dir(args.data_dir), args.with_knowledge)


def _import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from desktop.archive_cmd import run_import
    from protocol.datadir import resolve_data_dir

    return run_import(Path(args.file), resolve_data_dir(args.data_dir), args.agent_id)


def _adopt(args: argparse.Namespace) -> int:
    from desktop.archive_cmd import run_adopt
    from protocol.datadir import resolve_data_dir

    return run_adopt(args.agent, args.grant, resolve_data_dir(args.data_dir))


def _acp(args: argparse.Namespace) -> int:
    """Serve the Agent Client Protocol on stdio, for an editor."""
    from desktop.acp import AcpOptions, run_acp

    return run_acp(AcpOptions(agent=args.agent, data_dir=args.data_dir, verbose=args.verbose))


def _schema(args: argparse.Namespace) -> int:
    from protocol.schema import schema_json

    text = schema_json()
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _add(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help_text: str,
    func: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    parser = commands.add_parser(name, help=help_text, description=help_text)
    _common(parser)
    parser.set_defaults(func=func)
    return parser


def _add_chat(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chat = _add(
        commands, "chat", "Chat with an agent in the terminal (found by id or name; created if missing).", _chat
    )
    chat.add_argument("agent", help="the agent's id or name (any case), or a new name")
    chat.add_argument(
        "--provider",
        choices=["local", "openai", "anthropic", "scripted"],
        help="model provider; the default, local, is a tiny embedded model for trying Hearth out, not for real work",
    )
    chat.add_argument("--model", help="model name, e.g. gpt-4o-mini or claude-sonnet-4-5")
    chat.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama")
    chat.add_argument("--key-secret", help="the name of the stored secret holding the API key")


def _add_secrets(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    secrets = commands.add_parser("secrets", help="Store, list or delete provider API keys (never printed).")
    _common(secrets)
    actions = secrets.add_subparsers(dest="action", required=True)
    for action, help_text, takes_name in (
        ("set", "Store a key (read without echo).", True),
        ("list", "List the names of stored keys.", False),
        ("delete", "Delete a stored key.", True),
    ):
        action_parser = _add(actions, action, help_text, _secrets)
        if takes_name:
            action_parser.add_argument("name")


def _add_memory(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    memory = commands.add_parser(
        "memory",
        help="See and govern what an agent remembers: hearth memory AGENT list|conflicts|review|history|why|...",
    )
    _common(memory)
    memory.add_argument("agent", help="the agent's id or name")
    actions = memory.add_subparsers(dest="action", required=True)

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        parser = _add(actions, name, help_text, _memory)
        _json(parser)
        return parser

    action("list", "List a view of the agent's memory (current facts by default).").add_argument(
        "--view", default="current", choices=MEMORY_VIEWS
    )
    action("conflicts", "Facts that disagree on one key, side by side.")
    review = action("review", "List what waits for review, or confirm, reject or edit one proposed fact.")
    review.add_argument("record_id", nargs="?")
    review.add_argument("decision", nargs="?", choices=["confirm", "reject", "edit"])
    review.add_argument("--text", help="the corrected text, for edit")
    action("history", "The audit trail of one fact (or of the whole memory).").add_argument("record_id", nargs="?")
    action("why", "Why a fact is believed: its source, the line it rests on, what replaced it.").add_argument(
        "record_id"
    )
    action("verify", "Re-walk the ledger's hash chain.")
    action("export", "Every fact and ledger record as JSON.").add_argument("--out", help="write to this file")
    for name, help_text in (
        ("forget", "Retract a fact (the audit trail keeps it)."),
        ("erase", "Erase a fact's text for good (the audit keeps that it existed)."),
    ):
        with_id = action(name, help_text)
        with_id.add_argument("record_id")
        with_id.add_argument("--reason")
        if name == "erase":
            with_id.add_argument(
                "--scrub-conversation",
                action="store_true",
                help="also scrub the text from the conversation's own messages (marked [erased])",
            )


def _add_knowledge(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    knowledge = commands.add_parser(
        "knowledge",
        help="The documents an agent works from: hearth knowledge AGENT "
        "add|list|remove|pause|resume|search|suggestions|accept|decline",
    )
    _common(knowledge)
    knowledge.add_argument("owner", metavar="AGENT", help="the agent's id or name (with --work, a Work's id)")
    knowledge.add_argument("--work", action="store_true", help="AGENT names a Work: its members read it")
    actions = knowledge.add_subparsers(dest="action", required=True)

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        parser = _add(actions, name, help_text, _knowledge)
        _json(parser)
        return parser

    add = action("add", "Admit files and folders (folders are read whole and watched).")
    add.add_argument("paths", nargs="+", metavar="PATH")
    add.add_argument("--pattern", help="in folders, only files whose name fits, e.g. '*.html'")
    add.add_argument("--no-wait", action="store_true", help="return at once instead of waiting until it is read")
    action("list", "The admitted sources, their state, and the files that could not be read.")
    for name, help_text in (
        ("remove", "Remove a source: its text, chunks and vectors leave the disk."),
        ("pause", "Stop watching and reading a source (what it holds stays searchable)."),
        ("resume", "Watch and read a paused source again."),
    ):
        action(name, help_text).add_argument("source_id", metavar="SOURCE")
    search = action("search", "Search the documents as the agent would, and see why each passage matched.")
    search.add_argument("query", nargs="+")
    search.add_argument("--limit", type=int, default=8)
    action("suggestions", "The documents the agent suggested, waiting for your yes or no.")
    accept = action("accept", "Admit a suggested document, with the same checks as add.")
    accept.add_argument("suggestion_id", metavar="SUGGESTION")
    accept.add_argument("--no-wait", action="store_true", help="return at once instead of waiting until it is read")
    action("decline", "Decline a suggested document: nothing is admitted.").add_argument(
        "suggestion_id", metavar="SUGGESTION"
    )


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


def _add_schedule(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    schedule = commands.add_parser(
        "schedule",
        help="When an agent wakes by itself: hearth schedule AGENT add|list|pause|resume|remove|approve|history",
    )
    _common(schedule)
    schedule.add_argument("agent", help="the agent's id or name")
    actions = schedule.add_subparsers(dest="action", required=True)
    add = _add(
        actions,
        "add",
        "Add a schedule: one of --at, --every or --cron, and the message its runs start with.",
        _schedule,
    )
    add.add_argument("message", help="what each scheduled run starts with")
    add.add_argument("--at", help="once, at this ISO 8601 time (without an offset: the host's time zone)")
    add.add_argument("--every", help="at this interval: 90s, 15m, 2h, 1d (at least a minute)")
    add.add_argument("--cron", help="a five-field cron expression, in the host's time zone")
    add.add_argument("--label", default="", help="a short name for it")
    add.add_argument("--when-busy", choices=["skip", "queue"], default="skip", help="when the agent is working")
    add.add_argument(
        "--missed", choices=["once", "skip"], default="once", help="firings missed while the host was down"
    )
    add.add_argument("--watch", help="skip a firing while nothing under this workspace path changed")
    add.add_argument("--work", help="make it a Work's schedule (the agent must be a member)")
    _json(_add(actions, "list", "List the agent's schedules: next wake, last outcome, proposed ones too.", _schedule))
    for name, help_text in (
        ("pause", "Pause a schedule (nothing fires, nothing is caught up later)."),
        ("resume", "Resume a paused schedule from now on."),
        ("approve", "Say yes to a schedule the agent proposed."),
        ("remove", "Remove a schedule (its history stays)."),
        ("history", "A schedule's firings and how each ended."),
    ):
        parser = _add(actions, name, help_text, _schedule)
        parser.add_argument("schedule_id", help="the schedule's id (s-...)")
        if name == "history":
            _json(parser)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _add_budget(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    budget = _add(commands, "budget", "Show an agent's (or a Work's) model use today, or cap it per day.", _budget)
    budget.add_argument("agent", help="the agent's id or name (ignored with --work)")
    budget.add_argument("--requests", type=_positive, help="at most this many model requests a day")
    budget.add_argument("--tokens", type=_positive, help="at most this many tokens a day")
    budget.add_argument("--clear", action="store_true", help="remove both caps")
    budget.add_argument("--work", help="the Work's budget instead")
    _json(budget)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hearth",
        description="Hearth: a local host for persistent AI agents. With no command, opens the desktop shell.",
    )
    _common(parser, top=True)
    parser.add_argument("--version", action=_Version)
    parser.set_defaults(func=_shell)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add(commands, "shell", "Open the desktop shell (what `hearth` alone does).", _shell)
    _add_chat(commands)
    _json(_add(commands, "agents", "List the agents with their status and model.", _agents))
    inspect = _add(
        commands, "inspect", "Show one agent: settings, status, memory, prompt epoch, sandbox roots.", _inspect
    )
    inspect.add_argument("agent", help="the agent's id or name")
    inspect.add_argument("--run", help="show this one run: its reply and which facts it saw (its receipt)")
    _json(inspect)
    _add_memory(commands)
    _add_knowledge(commands)
    _add_mcp(commands)
    _add_schedule(commands)
    _add_budget(commands)
    serve = _add(
        commands,
        "mcp-serve",
        "Be an MCP server on stdio for another tool (Claude Code, Codex, an editor): the agent's recall, "
        "knowledge search and memory proposals.",
        _mcp_serve,
    )
    serve.add_argument("agent", help="the agent's id or name")
    _add_secrets(commands)
    web = _add(commands, "web", "Serve the desktop shell in a browser on 127.0.0.1, behind a one-time token.", _web)
    web.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    host = _add(commands, "host", "Run the host, speaking JSON-RPC on stdio (what a desktop shell launches).", _host)
    host.add_argument("--idle-exit", type=float, metavar="SECONDS", help="serve only the socket; stop once idle")
    export = _add(commands, "export", "Write an agent (profile, settings, transcript, memory) to one file.", _export)
    export.add_argument("agent", help="the agent's id")
    export.add_argument("file", help="the archive to write (never over an existing file)")
    export.add_argument(
        "--with-knowledge", action="store_true", help="also carry its knowledge (documents' chunks; none by default)"
    )
    imported = _add(commands, "import", "Make an agent of an archive written by `hearth export`.", _import)
    imported.add_argument("file", help="the archive")
    imported.add_argument("--agent-id", help="import under this id instead of the one in the archive")
    adopt = _add(commands, "adopt", "Put in effect what an imported agent's archive asked for in its settings.", _adopt)
    adopt.add_argument("agent", help="the agent's id")
    adopt.add_argument("grant", nargs="*", help="a grant `hearth import` listed, or `all`; none lists what waits")
    acp = _add(commands, "acp", "Be an Agent Client Protocol agent on stdio (what an editor launches).", _acp)
    acp.add_argument("agent", nargs="?", help="the agent every session is of (default: one per project folder)")
    schema = commands.add_parser("schema", help="Print the JSON Schema of every method and event.")
    schema.add_argument("--out", help="write to this file instead of stdout")
    schema.set_defaults(func=_schema)
    return parser


def normalize_memory_order(argv: list[str]) -> list[str]:
    """Accept the older `hearth memory ACTION AGENT ...` by turning it into `hearth memory AGENT ACTION ...`.

    Only when the word after `memory` is an action and the next one is not: an agent named like an
    action (`list`) is reached in the new order, or by its id.
    """
    words = [
        i for i, word in enumerate(argv) if not word.startswith("-") and (i == 0 or argv[i - 1] not in _TAKES_VALUE)
    ]
    if len(words) < 3 or argv[words[0]] != "memory":
        return argv
    first, second = words[1], words[2]
    if argv[first] in MEMORY_ACTIONS and argv[second] not in MEMORY_ACTIONS:
        argv = list(argv)
        argv[first], argv[second] = argv[second], argv[first]
    return argv


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(normalize_memory_order(sys.argv[1:] if argv is None else list(argv)))
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # watchfiles reports every batch of file changes at INFO.
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    try:
        code: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # Whoever read our output has gone (`hearth agents --json | head`): stop quietly, as `cat` does,
        # with stdout pointed at /dev/null so the interpreter's own flush at exit raises nothing either.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code
