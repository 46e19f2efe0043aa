"""The `hearth` parser: every subcommand, `--data-dir` before or after it, the older memory word order."""

from __future__ import annotations

from desktop.memory_cmd import MEMORY_ACTIONS
from hearth import cli


def _parsed(*argv: str) -> dict[str, object]:
    args = cli.build_parser().parse_args(cli.normalize_memory_order(list(argv)))
    return {k: v for k, v in vars(args).items() if k != "func"} | {"func": args.func.__name__}


def test_no_command_opens_the_shell_and_data_dir_goes_anywhere() -> None:
    assert _parsed()["func"] == "_shell"
    assert _parsed("--data-dir", "/a", "agents")["data_dir"] == "/a"
    assert _parsed("agents", "--data-dir", "/b")["data_dir"] == "/b"
    assert _parsed("memory", "--data-dir", "/c", "ann", "list")["data_dir"] == "/c"
    assert _parsed("agents")["data_dir"] is None


def test_the_older_memory_order_means_the_same_as_the_new_one() -> None:
    old = _parsed("memory", "review", "ann", "m-0123456789ab", "confirm", "--data-dir", "/d")
    new = _parsed("memory", "ann", "review", "m-0123456789ab", "confirm", "--data-dir", "/d")
    assert old == new and new["agent"] == "ann" and new["decision"] == "confirm"
    assert _parsed("memory", "list", "ann", "--view", "proposed")["view"] == "proposed"
    # An agent named like an action is reached in the new order.
    named_list = _parsed("memory", "list", "review")
    assert named_list["agent"] == "list" and named_list["action"] == "review"


def test_the_parser_knows_every_memory_action() -> None:
    assert cli.MEMORY_ACTIONS == MEMORY_ACTIONS
