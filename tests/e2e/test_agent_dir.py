"""The read-only views of an agent's directory through the host: files, one file, inspection.

A shell sees only what is inside the agent's own directory; a symlink an agent planted is shown as a
link and never followed, and a path that climbs out is refused, while the agent's own files still read.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from protocol.errors import INVALID_PARAMS, NOT_FOUND, JsonRpcError
from tests.support.host_process import HostProcess, scripted_model


def test_a_shell_lists_and_reads_the_agents_files_and_nothing_outside(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann"})
            scratch = tmp_path / "agents/ann/scratch"
            scratch.mkdir(exist_ok=True)
            (scratch / "notes.md").write_text("# Notes\nthe library closes at six\n", encoding="utf-8")
            (scratch / "blob.bin").write_bytes(b"\x00\xff\x00binary")
            os.symlink(tmp_path / "host.lock", scratch / "escape")
            top = await host.call("agent.files", {"agentId": "ann"})
            names = {e["name"]: e["kind"] for e in top["entries"]}
            assert names["scratch"] == "dir" and names["profile.json"] == "file"
            listing = await host.call("agent.files", {"agentId": "ann", "path": "scratch"})
            kinds = {e["path"]: e["kind"] for e in listing["entries"]}
            assert kinds == {"scratch/blob.bin": "file", "scratch/escape": "symlink", "scratch/notes.md": "file"}
            notes = await host.call("agent.readFile", {"agentId": "ann", "path": "scratch/notes.md"})
            assert notes["text"].startswith("# Notes") and not notes["truncated"]
            cut = await host.call("agent.readFile", {"agentId": "ann", "path": "scratch/notes.md", "maxBytes": 7})
            assert cut["text"] == "# Notes" and cut["truncated"] and cut["size"] > 7
            blob = await host.call("agent.readFile", {"agentId": "ann", "path": "scratch/blob.bin"})
            assert blob["binary"] and blob.get("text") is None
            for path in ("scratch/escape", "../../host.lock", "/etc/passwd", "scratch"):
                with pytest.raises(JsonRpcError) as refused:
                    await host.call("agent.readFile", {"agentId": "ann", "path": path})
                assert refused.value.code == INVALID_PARAMS, path
            for method, params in (
                ("agent.files", {"agentId": "nobody"}),
                ("agent.readFile", {"agentId": "ann", "path": "scratch/missing.txt"}),
                ("agent.inspect", {"agentId": "nobody"}),
            ):
                with pytest.raises(JsonRpcError) as missing:
                    await host.call(method, params)
                assert missing.value.code == NOT_FOUND, method

    asyncio.run(main())


def test_inspect_names_the_agents_roots_and_its_prompt_epoch(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model({"match": ".*", "reply": "ok"})})
            before = await host.call("agent.inspect", {"agentId": "ann"})
            assert before["promptEpoch"] is None and before["transcriptEvents"] == 0
            await host.send_and_wait("ann", "hello")
            await host.call("memory.note", {"agentId": "ann", "text": "The user likes tea."})
            after = await host.call("agent.inspect", {"agentId": "ann"})
            root = os.path.realpath(tmp_path / "agents/ann")
            assert after["dir"] == root and after["transcriptEvents"] == 5  # user, context, receipt, assistant, ended
            assert after["promptEpoch"] is not None and after["promptEpoch"] >= 1
            assert after["sandbox"]["workspace"] == f"{root}/scratch"
            assert after["sandbox"]["readOnly"] == [f"{root}/memory"]
            assert after["sandbox"]["permission"] == "ask" and after["sandbox"]["network"] is False

    asyncio.run(main())
