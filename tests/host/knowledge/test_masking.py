"""A secret in a document is masked before it is stored; the words around it stay."""

from __future__ import annotations

import pytest

from host.knowledge.masking import mask_secrets
from host.memory.gate import find_sensitive

KEY = "sk-proj-" + "Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h1J3k5"


def test_a_text_without_secrets_is_stored_as_it_is() -> None:
    assert mask_secrets("Water the beds at dawn.\nPrune in winter.") == ("Water the beds at dawn.\nPrune in winter.", 0)


@pytest.mark.parametrize(
    ("text", "secret", "kept"),
    [
        (f"Deploy notes.\nexport OPENAI_API_KEY={KEY}\nThen run it.", KEY, "Then run it."),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 in the middle", "ghp_abcdefghij", "in the middle"),
        ("The wifi password is hunter2xyz, ask Bob.", "hunter2xyz", "The wifi password is"),
        ("db password: Sup3rS3cret! ok", "Sup3rS3cret", "db"),
    ],
)
def test_a_secret_is_masked_and_the_rest_of_the_text_kept(text: str, secret: str, kept: str) -> None:
    masked, lines = mask_secrets(text)
    assert secret not in masked and kept in masked and lines == 1
    assert "(hidden: " in masked
    assert find_sensitive(masked) is None


def test_a_private_key_block_leaves_nothing_the_gate_refuses() -> None:
    body = "MIIEowIBAAKCAQEA1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
    masked, _ = mask_secrets(f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----")
    assert body not in masked and find_sensitive(masked) is None
