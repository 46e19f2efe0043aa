"""Which folder may be a project root (issue 21.9): the rule `hearth acp` and the host share, on canonical paths."""

from __future__ import annotations

import pytest

from protocol.project_root import project_root_refusal

HOME = "/home/ada"
DATA = "/home/ada/.local/share/hearth"


@pytest.mark.parametrize(
    "root",
    ["/", "/etc", "/etc/nginx", "/usr", "/usr/local/src/app", "/proc/1", "/sys", "/dev", "/run/user/1000", "/boot",
     "/lib64", "/snap/core", "/nix/store", "/var/lib/docker", "/var/log", "/var/cache/apt",
     "/home", "/tmp", "/var", "/var/tmp", "/var/www", "/var/home", "/opt", "/srv", "/mnt", "/media", "/root",
     HOME, "/home/ada/.local", DATA, f"{DATA}/agents/a"],
)  # fmt: skip
def test_a_system_tree_a_folder_of_folders_the_home_and_the_data_dir_are_refused(root: str) -> None:
    assert project_root_refusal(root, data_dir=DATA, home=HOME) is not None


@pytest.mark.parametrize(
    "root",
    ["/home/ada/code/app", "/home/ada/.config/nvim", "/tmp/scratch", "/var/www/site", "/var/tmp/build",
     "/var/home/ada/p", "/opt/app", "/srv/site", "/mnt/disk/proj", "/media/ada/usb/proj", "/root/proj", "/data/repo",
     "/usrlocal", "/etcetera"],
)  # fmt: skip
def test_a_projects_own_folder_is_a_project_root(root: str) -> None:
    assert project_root_refusal(root, data_dir=DATA, home=HOME) is None


def test_the_home_of_the_root_user_is_a_home_like_any() -> None:
    assert project_root_refusal("/root", data_dir="/root/.local/share/hearth", home="/root") is not None
    assert project_root_refusal("/root/proj", data_dir="/root/.local/share/hearth", home="/root") is None
