"""desktop.acp: `hearth acp`, Hearth as an Agent Client Protocol (v1) agent for editors, on stdio.

An editor's session is a session of one persistent Hearth agent, reached through the running host (never by
opening its files); the mapping of every ACP method is in docs/acp.md. Imports only `protocol`, `desktop`'s own
client and the `acp` package.
"""

from desktop.acp.main import AcpOptions, run_acp

__all__ = ["AcpOptions", "run_acp"]
