"""Which folder may be a run's project root: the one rule `hearth acp` (at session/new) and the host (at
`agent.send`) both apply, to a canonical path.

A project root is read without asking, so it may not be `/`, a system tree (`SYSTEM_TREES`, and everything
under them), a folder that only holds other folders of many owners (`HOLDERS`: `/home`, `/tmp`, `/mnt`, ...;
a project inside one is fine), the person's home itself or a folder holding it (that would open `~/.ssh`),
nor overlap Hearth's data directory. Linux paths: on another system only `/`, the home and the data dir count.
"""

from __future__ import annotations

__all__ = ["FIX", "HOLDERS", "SYSTEM_TREES", "project_root_refusal"]

FIX = "open a project's own folder, such as ~/code/my-app"
"""What to do instead, the `data.fix` of a refusal."""

SYSTEM_TREES = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/lost+found",
    "/nix",
    "/proc",
    "/run",
    "/sbin",
    "/snap",
    "/sys",
    "/usr",
    "/var/backups",
    "/var/cache",
    "/var/db",
    "/var/empty",
    "/var/lib",
    "/var/local",
    "/var/lock",
    "/var/log",
    "/var/mail",
    "/var/opt",
    "/var/run",
    "/var/spool",
)
"""Trees of the system itself, refused with everything under them. `/var` is not one as a whole: projects
live under `/var/www`, and homes under `/var/home` on some systems."""

HOLDERS = ("/home", "/media", "/mnt", "/opt", "/root", "/srv", "/tmp", "/var", "/var/home", "/var/tmp", "/var/www")
"""Folders refused themselves (each holds many people's or programs' files) whose sub-folders may be projects."""


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def project_root_refusal(root: str, *, data_dir: str, home: str | None) -> str | None:
    """Why canonical `root` cannot be a project root, or None when it can.

    Args:
        root: the canonical (symlink-free) absolute folder.
        data_dir: Hearth's canonical data directory.
        home: the person's canonical home directory, when known.

    Returns:
        A sentence fit to show the person, or None.
    """
    if root == "/":
        return "/ cannot be a project root: it holds the whole system"
    tree = next((tree for tree in SYSTEM_TREES if _within(root, tree)), None)
    if tree is not None:
        where = "a system tree" if root == tree else f"in the system tree {tree}"
        return f"{root} is {where}, which cannot be a project root"
    if root in HOLDERS:
        return f"{root} holds many people's or programs' folders and cannot be a project root itself"
    if home is not None and home != "/" and _within(home, root):
        return f"{root} is your home folder (or holds it); a project root there would open ~/.ssh and the like"
    if _within(root, data_dir) or _within(data_dir, root):
        return (
            f"{root} overlaps Hearth's data directory {data_dir}; open a folder that neither holds it nor lies "
            "inside it (or keep Hearth's data elsewhere with HEARTH_HOME)"
        )
    return None
