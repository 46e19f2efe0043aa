"""Which environment variables an MCP server may not be given: every one that says where code is loaded from."""

from __future__ import annotations

import pytest

from sandbox.loader_vars import refused_variable, refused_variables


@pytest.mark.parametrize(
    "name",
    [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "ld_preload",
        "DYLD_INSERT_LIBRARIES",
        "DYLD_LIBRARY_PATH",
        "GCONV_PATH",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "PYTHONUSERBASE",
        "PYTHONSAFEPATH",
        "PYTHONNOUSERSITE",
        "PYTHONPYCACHEPREFIX",
        "PYTHONWARNINGS",
        "NODE_OPTIONS",
        "NODE_PATH",
        "npm_config_cache",
        "npm_config_userconfig",
        "NPM_CONFIG_PREFIX",
        "PIP_FIND_LINKS",
        "PIP_CONFIG_FILE",
        "UV_CACHE_DIR",
        "BASH_ENV",
        "ENV",
        "ZDOTDIR",
        "PERL5LIB",
        "PERL5OPT",
        "RUBYLIB",
        "RUBYOPT",
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_SSH_COMMAND",
        "GIT_DIR",
        "XDG_CONFIG_HOME",
        "LUA_PATH",
        "JAVA_TOOL_OPTIONS",
        "CLASSPATH",
        "OPENSSL_CONF",
        "PATH",
        "HOME",
        "TMPDIR",
        "HEARTH_WORKSPACE",
    ],
)
def test_a_loader_variable_or_one_the_sandbox_sets_is_refused(name: str) -> None:
    assert refused_variable(name, "/anything") is not None


@pytest.mark.parametrize(
    "name",
    [
        "NOTES_TOKEN",
        "API_KEY",
        "LANG",
        "TZ",
        "NODE_ENV",
        "NODE_EXTRA_CA_CERTS",
        "PYTHONUNBUFFERED",
        "PYTHONIOENCODING",
        "GIT_AUTHOR_NAME",
        "npm_config_loglevel",
        "MEMORY_FILE_PATH",
        "DEBUG",
    ],
)
def test_an_ordinary_variable_is_accepted(name: str) -> None:
    assert refused_variable(name, "value") is None


def test_a_package_index_is_accepted_only_as_an_http_url() -> None:
    assert refused_variable("npm_config_registry", "https://npm.example.org/") is None
    assert refused_variable("PIP_INDEX_URL", "http://pypi.internal/simple") is None
    assert refused_variable("PIP_INDEX_URL", "file:///agents/ann/scratch/simple") is not None
    assert refused_variable("UV_INDEX_URL", "/agents/ann/scratch") is not None


def test_each_refusal_names_its_variable_and_the_rest_pass() -> None:
    found = refused_variables([("TOKEN", "x"), ("LD_PRELOAD", "/x.so"), ("NODE_OPTIONS", None)])
    assert [line.split(" ", 1)[0] for line in found] == ["LD_PRELOAD", "NODE_OPTIONS"]
    assert "dynamic linker" in found[0]
