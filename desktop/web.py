"""`hearth web`: the desktop shell in a browser, served by textual-serve on 127.0.0.1 behind a one-time address.

textual-serve runs one shell process per browser tab and bridges it over a websocket. Its server has no
access control, so every request passes a guard first: the Host header (and an Origin header) must name this
loopback address (no DNS rebinding), and the request must carry a session cookie. The printed address holds a
token that works once: its first request gets the HttpOnly, SameSite=Strict cookie and a page that replaces
itself with the same URL without the token, so the token leaves the browser's history and is never written to
a log; a second use is refused with a page saying how to get a new address (Enter in the terminal prints
one). Anything else gets 403 and starts no process. The access log names a request's path, never its query.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import json
import os
import secrets
import shlex
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from textual_serve.server import Server

__all__ = ["TokenServer", "run_web", "COOKIE"]

COOKIE = "hearth_session"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_NO_SESSION = "Forbidden: open the address `hearth web` printed, token included.\n"
_SPENT = (
    "This address does not open Hearth (any more): each address `hearth web` prints works once, in one browser, "
    "which then keeps a cookie.\nFor a new address, press Enter in the terminal where `hearth web` runs (or start "
    "it again), and open the address it prints.\n"
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _digest(value: str) -> bytes:
    # Kept as digests, so a lookup compares hashes the requester cannot steer, not the secrets themselves.
    return hashlib.sha256(value.encode("utf-8")).digest()


def _redirect(clean: str) -> web.Response:
    """A page that replaces itself with `clean`: the token's URL leaves the history, and is sent as no Referer.

    Not a 303: after a redirect that a link on another site started, the browser would leave the SameSite=Strict
    cookie off the redirected request; a navigation this page starts is same-site, so the cookie goes with it.
    """
    target = json.dumps(clean).replace("<", "\\u003c")
    body = (
        f'<!doctype html><meta http-equiv="refresh" content="0; url={html.escape(clean)}">'
        f"<script>location.replace({target})</script><p>Opening Hearth…</p>"
    )
    headers = {"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}
    return web.Response(text=body, content_type="text/html", headers=headers)


class _PathOnlyAccessLog(AbstractAccessLogger):
    """aiohttp's access log without the query string, Referer or cookies: a token may be in any of them."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info("%s %s %s %.3fs", request.method, request.path, response.status, time)


class TokenServer(Server):
    """textual-serve's server, bound to 127.0.0.1, refusing every request without a session.

    Args:
        command: the shell command each browser tab runs.
        port: the port to listen on.
    """

    def __init__(self, command: str, port: int) -> None:
        super().__init__(command, host="127.0.0.1", port=port, title="Hearth")
        self._hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self._pending: bytes | None = None  # the digest of the one address that may still open a session
        self._sessions: set[bytes] = set()

    def new_address(self) -> str:
        """A fresh one-time address; the address printed before it, if still unused, stops working."""
        token = secrets.token_urlsafe(24)
        self._pending = _digest(token)
        return f"{self.public_url}/?token={token}"

    def _redeem(self, token: str) -> str | None:
        """A new session for the pending token (which is spent by it), or None for any other token."""
        if self._pending is None or _digest(token) != self._pending:
            return None
        self._pending = None
        session = secrets.token_urlsafe(32)
        self._sessions.add(_digest(session))
        return session

    def _same_site(self, request: web.Request) -> bool:
        if request.host not in self._hosts:
            return False
        origin = request.headers.get("Origin")
        return origin is None or origin.removeprefix("http://") in self._hosts

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not self._same_site(request):
            return web.Response(status=403, text=_NO_SESSION)
        has_session = _digest(request.cookies.get(COOKIE, "")) in self._sessions
        if "token" in request.query:
            clean = str(request.rel_url.without_query_params("token"))
            session = self._redeem(request.query["token"])
            if session is not None:
                opened = _redirect(clean)
                opened.set_cookie(COOKIE, session, httponly=True, samesite="Strict", path="/")
                return opened
            # A browser that already has a session (a reopened address) goes to the page; anyone else is told.
            return _redirect(clean) if has_session else web.Response(status=403, text=_SPENT)
        if not has_session:
            return web.Response(status=403, text=_NO_SESSION)
        return await handler(request)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints its banner here, before it listens; the address is printed once it does."""

    def _print_address(self) -> None:
        print(f"Hearth is at {self.new_address()}", flush=True)

    def _watch_enter(self, loop: asyncio.AbstractEventLoop) -> int | None:
        """Print a new address whenever a line arrives on stdin; the fd watched, or None when stdin cannot be."""
        if sys.stdin is None:
            return None
        try:
            fd = sys.stdin.fileno()
            loop.add_reader(fd, self._on_stdin, loop, fd)
        except (OSError, ValueError):  # closed, or a regular file, which cannot be watched
            return None
        # Run in the background, a read of the terminal would stop the process; ignored, it fails (EIO) instead.
        signal.signal(signal.SIGTTIN, signal.SIG_IGN)
        return fd

    def _on_stdin(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(fd)
        elif b"\n" in data:
            self._print_address()

    async def run(self) -> None:
        """Listen on 127.0.0.1, print the address with its token, serve until SIGINT or SIGTERM."""
        self.initialize_logging()
        runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log_class=_PathOnlyAccessLog)
        await runner.setup()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        watched: int | None = None
        try:
            await web.TCPSite(runner, "127.0.0.1", self.port).start()
            self._print_address()
            print(
                "The address works once, in one browser, and until then anyone with it can use your agents. "
                "Press Enter here for a new address, Ctrl+C to stop.",
                flush=True,
            )
            watched = self._watch_enter(loop)
            await stop.wait()
        finally:
            if watched is not None:
                loop.remove_reader(watched)
            await runner.cleanup()


def run_web(data_dir: Path, *, port: int = 0) -> int:
    """Serve the shell until Ctrl+C. Returns the exit code."""
    command = shlex.join([sys.executable, "-m", "hearth", "shell", "--data-dir", str(data_dir)])
    server = TokenServer(command, port or _free_port())
    asyncio.run(server.run())
    return 0
