"""Shell commands that stay denied under every permission mode, `always` included.

Deleting the filesystem root or a home directory, making filesystems, writing raw disks and fork bombs are
refused before the shell sees them. The check is a tripwire for the obvious forms (wrappers such as sudo, env
and `sh -c` are looked through); the OS sandbox remains what actually confines a command.
"""

from __future__ import annotations

import posixpath
import re
import shlex

__all__ = ["hard_denied_reason"]

_OPERATORS = frozenset({";", "&", "|", "&&", "||", ";;", "(", ")", "{", "}", "|&", "!", "\n"})
_WRAPPERS = frozenset({"sudo", "doas", "env", "nohup", "nice", "time", "command", "exec", "builtin", "busybox"})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
_PROTECTED_TARGETS = frozenset({"/", "/*", "/.", "/..", "/home", "/home/*", "/root", "/root/*", "~", "~/*"})
_MKFS = re.compile(r"^(mkfs(\..+)?|mke2fs|mkswap|wipefs|blkdiscard)$")
_DISK = r"/dev/(sd[a-z]+|hd[a-z]+|vd[a-z]+|xvd[a-z]+|nvme\d+n\d+|mmcblk\d+|md\d+|dm-\d+|loop\d+|mapper/|disk/)"
_DISK_ARG = re.compile(r"^" + _DISK)
_DISK_OF = re.compile(r"^of=" + _DISK)
_DISK_REDIRECT = re.compile(r">>?\|?\s*" + _DISK)
_DISK_WRITERS = frozenset({"shred", "tee", "truncate"})
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_FORK_BOMB = re.compile(r"([\w:.]+)\s*\(\)\s*\{[^}]*\1\s*\|\s*&?\s*\1[^}]*&[^}]*\}")


def hard_denied_reason(command: str) -> str | None:
    """Why `command` is refused under every permission mode, or None when it is not hard-denied.

    Args:
        command: the exact shell command the model asked to run.

    Returns:
        A short reason fit to show the model, or None.
    """
    compact = command.replace("\\\n", " ")
    if _FORK_BOMB.search(compact):
        return "fork bombs are never run"
    if _DISK_REDIRECT.search(compact):
        return "raw disk writes are never run"
    # Command substitutions run even inside double quotes, where the tokenizer sees one word.
    for inner in _SUBSTITUTION.findall(compact):
        reason = _check_tokens(inner[0] or inner[1])
        if reason is not None:
            return reason
    return _check_tokens(compact)


def _check_tokens(command: str) -> str | None:
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()!\n")
        lexer.whitespace = " \t\r"
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        tokens = command.split()
    segment: list[str] = []
    for token in [*tokens, ";"]:
        if token in _OPERATORS or set(token) <= set(";&|()!\n"):
            reason = _check_simple(segment)
            if reason is not None:
                return reason
            segment = []
        else:
            segment.append(token)
    return None


def _check_simple(words: list[str]) -> str | None:
    # Leading assignments are skipped; behind a wrapper (sudo -u x, env -i, nice -n 5) every later word may be
    # the real program, so each is tried: a tripwire may over-match, it must not under-match.
    i = 0
    while i < len(words) and _ASSIGNMENT.match(words[i]):
        i += 1
    if i >= len(words):
        return None
    starts = [i]
    if posixpath.basename(words[i]) in _WRAPPERS:
        starts = list(range(i + 1, len(words)))
    for start in starts:
        reason = _check_program(posixpath.basename(words[start]), words[start + 1 :])
        if reason is not None:
            return reason
    return None


def _check_program(program: str, args: list[str]) -> str | None:
    if program in _SHELLS and "-c" in args:
        script_at = args.index("-c") + 1
        # The script is strictly shorter than the command that holds it, so this recursion ends.
        if script_at < len(args):
            return hard_denied_reason(args[script_at])
    if _MKFS.match(program):
        return "making or wiping filesystems is never run"
    if (
        (program in _DISK_WRITERS and any(_DISK_ARG.match(arg) for arg in args))
        or (program == "dd" and any(_DISK_OF.match(arg) for arg in args))
        or (program in ("cp", "mv", "install") and args and _DISK_ARG.match(args[-1]))
    ):
        return "raw disk writes are never run"
    if program == "rm" and _removes_root_or_home(args):
        return "deleting the filesystem root or a home directory is never run"
    if program == "find" and "-delete" in args and args and _is_root_or_home(args[0]):
        return "deleting the filesystem root or a home directory is never run"
    return None


def _removes_root_or_home(args: list[str]) -> bool:
    recursive = False
    targets: list[str] = []
    options_done = False
    for arg in args:
        if options_done or not arg.startswith("-"):
            targets.append(arg)
        elif arg == "--":
            options_done = True
        elif arg == "--no-preserve-root":
            return True
        elif arg == "--recursive" or (not arg.startswith("--") and "r" in arg.lower()):
            recursive = True
    return recursive and any(_is_root_or_home(target) for target in targets)


def _is_root_or_home(target: str) -> bool:
    if target in _PROTECTED_TARGETS or posixpath.normpath(target) in ("/", "//"):
        return True
    return re.fullmatch(r"(/home/[^/]+|/root|~[^/]*|\$\{?HOME\}?)/*\*?", target) is not None
