"""Commands that stay denied under every permission mode, and everyday commands that do not."""

from __future__ import annotations

import pytest

from sandbox import hard_denied_reason

DENIED = [
    "rm -rf /",
    "rm -rf /*",
    "rm -fr ~",
    "rm -r -f ~/",
    'rm -rf "$HOME"',
    "rm -rf ${HOME}/*",
    "rm -rf /home/person",
    "sudo rm -rf --no-preserve-root /",
    "sudo -u root rm -Rf /",
    "cd /tmp && rm -rf /",
    "FOO=1 env -i rm -rf /",
    "bash -c 'rm -rf /'",
    'sh -c "echo hi; rm -rf ~"',
    "find / -delete",
    'echo "$(rm -rf /)"',
    "echo `rm -rf ~`",
    "mkfs.ext4 /dev/sda1",
    "mkfs -t xfs /dev/nvme0n1p1",
    "wipefs -a /dev/sdb",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "echo x > /dev/vda",
    "cat image.iso | tee /dev/sdb > /dev/null",
    "cp disk.img /dev/mmcblk0",
    "shred /dev/nvme0n1",
    ":(){ :|:& };:",
    "bomb() { bomb | bomb & }; bomb",
]

ALLOWED = [
    "rm -rf build/",
    "rm -rf ./node_modules",
    "rm -f /tmp/x.txt",
    "rm -rf $HOME/project/build",
    "ls /",
    "echo rm -rf /",
    "grep -r mkfs docs/",
    "dd if=in.bin of=out.bin",
    "cat /dev/sda",
    "cp /dev/sda disk.img",
    "echo hi > /dev/null",
    "find . -name '*.pyc' -delete",
    "python3 -c 'print(1)'",
]


@pytest.mark.parametrize("command", DENIED)
def test_a_destructive_command_is_hard_denied(command: str) -> None:
    assert hard_denied_reason(command) is not None


@pytest.mark.parametrize("command", ALLOWED)
def test_an_everyday_command_is_not_hard_denied(command: str) -> None:
    assert hard_denied_reason(command) is None


def test_an_unbalanced_quote_still_gets_checked() -> None:
    assert hard_denied_reason("rm -rf / 'unterminated") is not None
    assert hard_denied_reason("echo 'unterminated") is None
