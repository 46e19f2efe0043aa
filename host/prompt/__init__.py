"""host.prompt: the system prompt: an agent's identity, rules and teammates (`identity`), and its per-epoch
frozen cache in `prompt-cache.json` with the per-turn recall block (`cache`).
"""

from host.prompt.cache import MemorySource, assemble_prompt, bump_epoch
from host.prompt.identity import AgentIdentity, build_system_prompt

__all__ = ["AgentIdentity", "MemorySource", "assemble_prompt", "build_system_prompt", "bump_epoch"]
