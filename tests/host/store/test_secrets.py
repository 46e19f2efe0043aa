"""The secrets store on a real disk: encryption, permissions, atomic writes, corrupt files, key resolution."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from host.store.secrets import SecretStore, resolve_api_key
from protocol.errors import CORRUPT_FILE, INVALID_PARAMS, NOT_FOUND, PROVIDER_ERROR, JsonRpcError

VALUE = "sk-proj-TOPSECRET-0123456789"
OTHER = "sk-ant-ALSOSECRET-9876543210"


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_secret_set_is_read_back_by_a_new_store_on_the_same_directory(tmp_path: Path) -> None:
    SecretStore(tmp_path).set("openai", VALUE)
    assert SecretStore(tmp_path).get("openai") == VALUE


def test_list_gives_sorted_names_and_never_values(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("openai", VALUE)
    store.set("anthropic", OTHER)
    names = store.list()
    assert names == ["anthropic", "openai"]
    assert VALUE not in repr(names) + repr(store)


def test_the_file_on_disk_does_not_contain_the_value(tmp_path: Path) -> None:
    SecretStore(tmp_path).set("openai", VALUE)
    assert VALUE.encode() not in (tmp_path / "secrets.bin").read_bytes()


def test_key_file_and_secrets_file_are_readable_only_by_the_owner(tmp_path: Path) -> None:
    SecretStore(tmp_path).set("openai", VALUE)
    assert mode_of(tmp_path / "secrets.key") == 0o600
    assert mode_of(tmp_path / "secrets.bin") == 0o600


def test_a_key_file_readable_by_others_is_made_private_and_the_log_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SecretStore(tmp_path)
    store.set("openai", VALUE)
    os.chmod(tmp_path / "secrets.key", 0o644)
    with caplog.at_level(logging.WARNING, logger="host.store.secrets"):
        assert store.get("openai") == VALUE
    assert mode_of(tmp_path / "secrets.key") == 0o600
    assert any("secrets.key" in r.getMessage() for r in caplog.records)


def test_a_private_key_file_is_left_alone_without_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = SecretStore(tmp_path)
    store.set("openai", VALUE)
    with caplog.at_level(logging.WARNING, logger="host.store.secrets"):
        assert store.get("openai") == VALUE
    assert caplog.records == []


def test_replacing_a_value_keeps_the_other_secrets(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    assert store.set("openai", VALUE) is False
    store.set("anthropic", OTHER)
    assert store.set("openai", "sk-new-value") is True
    assert store.get("openai") == "sk-new-value"
    assert store.get("anthropic") == OTHER


def test_a_pasted_newline_is_dropped_from_the_value(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("openai", f"  {VALUE}\n")
    assert store.get("openai") == VALUE


def test_delete_removes_only_the_named_secret(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("openai", VALUE)
    store.set("anthropic", OTHER)
    store.delete("openai")
    assert store.list() == ["anthropic"]
    assert store.get("anthropic") == OTHER


def test_deleting_an_unknown_name_is_not_found_and_changes_nothing(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("anthropic", OTHER)
    with pytest.raises(JsonRpcError) as caught:
        store.delete("openai")
    assert caught.value.code == NOT_FOUND
    assert store.get("anthropic") == OTHER


@pytest.mark.parametrize("name", ["OpenAI", "has space", "", "-lead", "a/b", "x" * 65, "../key"])
def test_names_that_are_not_slugs_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(JsonRpcError) as caught:
        SecretStore(tmp_path).set(name, VALUE)
    assert caught.value.code == INVALID_PARAMS
    assert VALUE not in str(caught.value)


@pytest.mark.parametrize("name", ["openai", "deepseek", "work-anthropic", "vllm_1", "a.b"])
def test_slug_names_are_accepted(tmp_path: Path, name: str) -> None:
    store = SecretStore(tmp_path)
    store.set(name, VALUE)
    assert store.list() == [name]


def test_an_empty_value_is_refused(tmp_path: Path) -> None:
    with pytest.raises(JsonRpcError) as caught:
        SecretStore(tmp_path).set("openai", "  \n")
    assert caught.value.code == INVALID_PARAMS


def test_a_corrupt_secrets_file_is_a_clear_error_and_is_never_overwritten(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("openai", VALUE)
    damaged = b"gAAAAAB-not-a-real-token"
    (tmp_path / "secrets.bin").write_bytes(damaged)
    for action in (store.list, lambda: store.set("anthropic", OTHER), lambda: store.delete("openai")):
        with pytest.raises(JsonRpcError) as caught:
            action()
        assert caught.value.code == CORRUPT_FILE
        assert "secrets.bin" in str(caught.value)
    assert (tmp_path / "secrets.bin").read_bytes() == damaged


def test_a_secrets_file_without_its_key_is_an_error_and_no_new_key_is_made(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("openai", VALUE)
    before = (tmp_path / "secrets.bin").read_bytes()
    (tmp_path / "secrets.key").unlink()
    with pytest.raises(JsonRpcError) as caught:
        store.set("anthropic", OTHER)
    assert "secrets.key" in str(caught.value)
    assert not (tmp_path / "secrets.key").exists()
    assert (tmp_path / "secrets.bin").read_bytes() == before


def test_writes_leave_no_temporary_files_behind(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("openai", VALUE)
    store.set("anthropic", OTHER)
    store.delete("openai")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secrets.bin", "secrets.key"]


def test_values_never_reach_the_log(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = SecretStore(tmp_path)
    with caplog.at_level(logging.DEBUG):
        store.set("openai", VALUE)
        store.get("openai")
        store.delete("openai")
    assert caplog.records
    assert all(VALUE not in r.getMessage() for r in caplog.records)


def test_resolve_returns_the_stored_key_for_a_remote_api(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("openai", VALUE)
    assert resolve_api_key(store, "openai", None, None) == VALUE


def test_resolve_uses_the_secret_named_by_the_model_settings(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("openai", VALUE)
    store.set("deepseek", OTHER)
    assert resolve_api_key(store, "openai", "deepseek", "https://api.deepseek.com/v1") == OTHER


def test_resolve_refuses_a_remote_api_with_no_stored_key(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("anthropic", OTHER)
    with pytest.raises(JsonRpcError) as caught:
        resolve_api_key(store, "openai", None, "https://api.openai.com/v1")
    assert caught.value.code == PROVIDER_ERROR
    assert "hearth secrets set openai" in str(caught.value)


def test_resolve_needs_no_key_for_a_loopback_server_or_the_embedded_model(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    assert resolve_api_key(store, "openai", None, "http://127.0.0.1:11434/v1") is None
    assert resolve_api_key(store, "anthropic", None, "http://localhost:8080") is None
    assert resolve_api_key(store, "local", None, None) is None
    assert resolve_api_key(store, "scripted", None, None) is None
    assert not (tmp_path / "secrets.key").exists()


def test_resolve_still_sends_a_stored_key_to_a_loopback_server(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("vllm", VALUE)
    assert resolve_api_key(store, "openai", "vllm", "http://127.0.0.1:8000/v1") == VALUE
