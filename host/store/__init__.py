"""host.store: the host's files: atomic writes, agent directories, transcripts, tool approvals, settings, secrets.
Every storage file, here or elsewhere in the host, writes through `atomic` (whole files) or `durable` (appends);
docs/decisions.md names the few exempt ones and why.

Every JSON file is written atomically; transcripts are append-only; secrets are encrypted at rest.
"""

from host.store.agents import Agent, AgentStore
from host.store.approvals import ApprovalStore
from host.store.atomic import read_json, write_bytes_atomic, write_json_atomic
from host.store.host_settings import HostSettingsStore
from host.store.secrets import SecretStore
from host.store.transcript import Transcript

__all__ = [
    "Agent",
    "AgentStore",
    "ApprovalStore",
    "HostSettingsStore",
    "SecretStore",
    "Transcript",
    "read_json",
    "write_bytes_atomic",
    "write_json_atomic",
]
