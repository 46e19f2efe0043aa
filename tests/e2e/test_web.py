"""`hearth web`: the shell in a browser on 127.0.0.1, opened once by the printed address, then by its cookie.

The address's token is spent by its first request, which gets the session cookie and a page that replaces
itself with the same URL without the token; the token's bytes are in no log (stderr, `<data>/logs/`), and the
page, a reload, its assets and the websocket that runs the shell work with the cookie alone.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

import aiohttp

from tests.support.host_process import REPO_ROOT, HostProcess

ADDRESS = re.compile(r"Hearth is at (http://127\.0\.0\.1:\d+)/\?token=(\S+)")


async def _address(stdout: asyncio.StreamReader) -> tuple[str, str]:
    """(base URL, token) of the next address `hearth web` prints."""
    async with asyncio.timeout(30):
        while line := (await stdout.readline()).decode("utf-8"):
            found = ADDRESS.search(line)
            if found is not None:
                return found.group(1), found.group(2)
    raise AssertionError("hearth web printed no address")


async def _get(
    http: aiohttp.ClientSession, url: str, cookie: str | None = None, **headers: str
) -> tuple[int, str, aiohttp.ClientResponse]:
    if cookie is not None:
        headers["Cookie"] = f"hearth_session={cookie}"
    async with http.get(url, headers=headers, allow_redirects=False) as response:
        return response.status, await response.text(), response


async def _first_screen(http: aiohttp.ClientSession, url: str, cookie: str) -> bytes:
    """What the shell's first frames over the websocket say (the websocket starts one shell process)."""
    origin = url.replace("ws://", "http://").removesuffix("/ws")
    headers = {"Cookie": f"hearth_session={cookie}", "Origin": origin}
    seen = b""
    async with http.ws_connect(url, headers=headers) as ws:
        await ws.send_json(["resize", {"width": 100, "height": 30}])
        async with asyncio.timeout(60):
            while b"Hearth" not in seen:
                message = await ws.receive()
                assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), message
                seen += message.data if isinstance(message.data, bytes) else message.data.encode("utf-8")
    return seen


def _files_under(root: Path) -> list[Path]:
    return [Path(d) / name for d, _, names in os.walk(root) for name in names]


def test_the_address_opens_the_shell_once_then_the_cookie_does_and_the_token_is_in_no_log(tmp_path: Path) -> None:
    """Issue 21.11: aiohttp's access log wrote `GET /?token=<TOKEN>` for every request, and the URL worked forever."""
    data = tmp_path / "data"
    stderr_path = tmp_path / "web-stderr.log"
    tokens: list[str] = []
    sessions: list[str] = []

    async def main() -> None:
        # The shell each websocket runs attaches to this host, which the test stops itself.
        async with HostProcess(data, stderr_to=tmp_path / "host-stderr.log"):
            with open(stderr_path, "wb") as stderr:
                web = await asyncio.create_subprocess_exec(
                    *(sys.executable, "-m", "hearth", "web", "--data-dir", str(data)),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=stderr,
                    cwd=REPO_ROOT,
                )
            assert web.stdin is not None and web.stdout is not None
            try:
                async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
                    await _browse(http, web.stdin, web.stdout)
            finally:
                web.send_signal(signal.SIGINT)
                async with asyncio.timeout(30):
                    assert await web.wait() == 0

    async def _browse(http: aiohttp.ClientSession, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader) -> None:
        base, token = await _address(stdout)
        tokens.append(token)
        status, page, opened = await _get(http, f"{base}/?token={token}&fontsize=18")
        assert status == 200 and 'location.replace("/?fontsize=18")' in page and token not in page
        assert opened.headers["Referrer-Policy"] == "no-referrer" and opened.headers["Cache-Control"] == "no-store"
        cookie = opened.cookies["hearth_session"]
        assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/"
        session = cookie.value
        sessions.append(session)
        assert token not in session

        # The clean page, a reload of it, and its assets open with the cookie.
        for _ in range(2):
            status, page, _ = await _get(http, f"{base}/?fontsize=18", session)
            assert status == 200 and "ws://127.0.0.1" in page and "/ws" in page and token not in page
        assert (await _get(http, f"{base}/static/js/textual.js", session))[0] == 200
        # The same browser reopening the spent address is sent to the page; anyone else is told how to get one.
        status, page, again = await _get(http, f"{base}/?token={token}", session)
        assert status == 200 and 'location.replace("/")' in page and "Set-Cookie" not in again.headers
        status, body, _ = await _get(http, f"{base}/?token={token}")
        assert status == 403 and "works once" in body and "press Enter" in body
        for refused in (f"{base}/", f"{base}/?token=guess", f"{base}/ws", f"{base}/static/js/textual.js"):
            status, body, _ = await _get(http, refused)
            assert status == 403 and "`hearth web`" in body, refused
        assert (await _get(http, f"{base}/", "not-a-session"))[0] == 403
        assert (await _get(http, f"{base}/", session, Host="attacker.example"))[0] == 403
        assert (await _get(http, f"{base}/", session, Origin="http://attacker.example"))[0] == 403

        # The websocket runs the shell with the cookie alone, and not without it.
        assert b"Hearth" in await _first_screen(http, f"{base.replace('http', 'ws')}/ws", session)
        try:
            await _first_screen(http, f"{base.replace('http', 'ws')}/ws", "not-a-session")
            raise AssertionError("a websocket without the session was accepted")
        except aiohttp.WSServerHandshakeError as refused_ws:
            assert refused_ws.status == 403

        # Enter prints a new address, which works once too; the session it opens is a new one.
        stdin.write(b"\n")
        await stdin.drain()
        base_again, fresh = await _address(stdout)
        tokens.append(fresh)
        assert base_again == base and fresh != token
        status, _, opened = await _get(http, f"{base}/?token={fresh}")
        assert status == 200 and opened.cookies["hearth_session"].value not in sessions
        sessions.append(opened.cookies["hearth_session"].value)
        assert (await _get(http, f"{base}/", sessions[-1]))[0] == 200
        assert (await _get(http, f"{base}/?token={fresh}"))[0] == 403
        assert (await _get(http, f"{base}/", session))[0] == 200  # the first browser keeps its session

    asyncio.run(main())
    logs = [stderr_path, *_files_under(data / "logs")]
    assert (data / "logs" / "shell.log").exists()
    assert b"GET / 200" in stderr_path.read_bytes()  # the access log is on, and names the path only
    for path in logs:
        content = path.read_bytes()
        assert [s for s in tokens + sessions if s.encode("utf-8") in content] == [], path
