"""Issue 24.6: each run's receipt lists what its request carried of memory. Through the real host, kernel and
`hearth` CLI with a fake model server: the receipt's fact ids are exactly those in the request the model
received (the memory section's and the recall block's), a retracted fact that was in no request is listed
nowhere, `hearth inspect AGENT --run RUN` says which facts the reply saw, and `hearth memory AGENT why ID` lists
the runs that saw a fact (and only those)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from tests.kernel.providers.fake_llm_server import Recorded
from tests.support.archives import hearth_async
from tests.support.fake_model import ChatServer, model_settings, say
from tests.support.host_process import HostProcess

BIKE = "The user's bike is red"
COAT = "The user's coat is green"
LOCKER = "My locker number is 4711 at the climbing gym."
_ID = re.compile(r"\[(m-[0-9a-f]+)\]")


def _extract(recorded: Recorded) -> str:
    prompt = recorded.body["messages"][-1]["content"]
    found = re.search(r"\[seq (\d+) · user\] My locker number is (\d+)", prompt)
    ops = []
    if found is not None:
        ops = [{"op": "assert", "text": f"The user's locker is {found[2]}", "seq": int(found[1]), "source": "user"}]
    return json.dumps({"operations": ops})


def _ids_in(body: dict[str, Any]) -> set[str]:
    return {found for m in body["messages"] for found in _ID.findall(m.get("content") or "")}


def _receipt(data_dir: Path, run_id: str) -> dict[str, Any]:
    lines = (data_dir / "agents/ann/transcript.jsonl").read_text(encoding="utf-8").splitlines()
    (receipt,) = [e for e in map(json.loads, lines) if e["type"] == "receipt" and e["runId"] == run_id]
    return dict(receipt)


def test_a_runs_receipt_lists_exactly_the_fact_ids_its_request_carried_and_why_lists_the_runs(tmp_path: Path) -> None:
    server = ChatServer(_extract, otherwise=say("ok"))
    server.start()

    async def main() -> dict[str, Any]:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server)})
            bike = (await host.call("memory.note", {"agentId": "ann", "text": BIKE}))["record"]["id"]
            coat = (await host.call("memory.note", {"agentId": "ann", "text": COAT}))["record"]["id"]
            await host.call("memory.retract", {"agentId": "ann", "recordId": coat})
            first = await host.idle_turn("ann", LOCKER)
            await host.wait_for("memory.extracted", lambda p: p["agentId"] == "ann" and p["operations"] == 1)
            second = await host.idle_turn("ann", "Which locker do I use at the gym?")
            locker = next(
                r["id"]
                for r in (await host.call("memory.list", {"agentId": "ann", "view": "current"}))["records"]
                if "locker" in r["text"]
            )
            shown = await hearth_async(tmp_path, "inspect", "ann", "--run", second["runId"])
            why_locker = await hearth_async(tmp_path, "memory", "ann", "why", locker)
            why_bike = await hearth_async(tmp_path, "memory", "ann", "why", bike, "--json")
            why_coat = await hearth_async(tmp_path, "memory", "ann", "why", coat)
            unknown = await hearth_async(tmp_path, "inspect", "ann", "--run", "run-nosuchrun")
            return {
                "ids": (bike, coat, locker),
                "runs": (first["runId"], second["runId"]),
                "out": (shown, why_locker, why_bike, why_coat, unknown),
            }

    try:
        found = asyncio.run(main())
    finally:
        server.stop()
    bike, coat, locker = found["ids"]
    first, second = found["runs"]
    shown, why_locker, why_bike, why_coat, unknown = found["out"]
    requests = server.chats()
    assert len(requests) == 2
    one, two = _receipt(tmp_path, first), _receipt(tmp_path, second)
    # Each receipt, checked against the request the model received: the same ids, no more, no fewer.
    assert set(one["section"]) | set(one["recall"]) == _ids_in(requests[0]) == {bike}
    assert set(two["section"]) | set(two["recall"]) == _ids_in(requests[1]) == {bike, locker}
    assert two["section"] == [bike] and two["recall"] == [locker], "the locker came through the recall block"
    assert coat not in json.dumps([one, two]), "the retracted fact was in no request and in no receipt"
    assert two["prefixHash"].startswith("sha256:") and two["epoch"] >= 1
    assert shown.returncode == 0, shown.stderr
    assert f"this reply saw {bike}, {locker}" in shown.stdout and "Which locker" in shown.stdout
    assert why_locker.returncode == 0, why_locker.stderr
    assert second in why_locker.stdout and first not in why_locker.stdout and "seen by 1 run(s)" in why_locker.stdout
    assert [r["runId"] for r in json.loads(why_bike.stdout)["seenBy"]] == [first, second]
    assert "seen by 0 run(s)" in why_coat.stdout
    assert unknown.returncode == 1 and "there is no run 'run-nosuchrun'" in unknown.stderr
