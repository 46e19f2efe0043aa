"""The installation's signing key (`host/store/signing.py`): made on first use, 0600, never in what it signs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from host.errors import CorruptFileError
from host.store.signing import SigningKey
from protocol.errors import CORRUPT_FILE


def test_the_key_is_made_private_on_first_signature_and_only_it_verifies_what_it_signed(tmp_path: Path) -> None:
    key = SigningKey(tmp_path)
    assert not key.path.exists() and key.check({"alg": "HMAC-SHA256", "mac": "00"}) is not None
    signed = key.sign({"head": "abc", "records": 3})
    assert stat.S_IMODE(key.path.stat().st_mode) == 0o600
    assert key.check(signed) is None
    assert key.path.read_text(encoding="ascii").strip() not in repr(signed) and "mac" in signed
    assert SigningKey(tmp_path).check(signed) is None, "the same installation, opened again"
    assert SigningKey(tmp_path / "elsewhere").check(signed) == "it is signed by another installation"
    for changed in ({**signed, "head": "abd"}, {**signed, "mac": "0" * 64}, {**signed, "records": 4}):
        assert key.check(changed) is not None


def test_a_signature_in_another_form_is_not_one_this_installation_makes(tmp_path: Path) -> None:
    key = SigningKey(tmp_path)
    signed = key.sign({"head": "abc"})
    for odd in ({}, {**signed, "alg": "none"}, {k: v for k, v in signed.items() if k != "mac"}, {**signed, "mac": 7}):
        assert key.check(odd) == "its signature is not one this installation makes"


def test_a_key_file_readable_by_others_is_tightened_and_a_damaged_one_is_named_and_left_alone(tmp_path: Path) -> None:
    key = SigningKey(tmp_path)
    signed = key.sign({"head": "abc"})
    os.chmod(key.path, 0o644)
    assert key.check(signed) is None and stat.S_IMODE(key.path.stat().st_mode) == 0o600
    key.path.write_text("not a key\n", encoding="ascii")
    with pytest.raises(CorruptFileError) as damaged:
        key.sign({"head": "abc"})
    assert damaged.value.code == CORRUPT_FILE and damaged.value.data == {"path": str(key.path)}
    assert key.path.read_text(encoding="ascii") == "not a key\n"
