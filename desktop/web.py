"""`hearth web`: the desktop shell in a browser, served by textual-serve on 127.0.0.1 behind a token.

textual-serve runs one shell process per browser tab and bridges it over a websocket. Its server has no
access control, so every request passes a guard first: the Host header must name this loopback address
(no DNS rebinding), and the request must carry the random token printed with the URL, either as
`?token=` (which sets an HttpOnly, SameSite=Strict cookie for the page's own later requests: its script,
styles and websocket) or as that cookie. Anything else gets 403 and starts no process.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import shlex
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from textual_serve.server import Server

__all__ = ["TokenServer", "run_web", "COOKIE"]

COOKIE = "hearth_token"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class TokenServer(Server):
    """textual-serve's server, bound to 127.0.0.1, refusing every request without the token."""

    def __init__(self, command: str, port: int, token: str) -> None:
        super().__init__(command, host="127.0.0.1", port=port, title="Hearth")
        self.token = token
        self._hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}

    @property
    def url(self) -> str:
        return f"{self.public_url}/?token={self.token}"

    def _allowed(self, request: web.Request) -> bool:
        if request.host not in self._hosts:
            return False
        origin = request.headers.get("Origin")
        if origin is not None and origin.removeprefix("http://") not in self._hosts:
            return False
        offered = request.query.get("token") or request.cookies.get(COOKIE) or ""
        return hmac.compare_digest(offered.encode("utf-8"), self.token.encode("utf-8"))

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not self._allowed(request):
            return web.Response(status=403, text="Forbidden: open the address `hearth web` printed, token included.\n")
        response = await handler(request)
        if request.query.get("token") and not response.prepared:
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict", path="/")
        return response

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints its banner here, before it listens; the address is printed once it does."""

    async def run(self) -> None:
        """Listen on 127.0.0.1, print the address with its token, serve until SIGINT or SIGTERM."""
        self.initialize_logging()
        runner = web.AppRunner(await self._make_app(), handle_signals=False)
        await runner.setup()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        try:
            await web.TCPSite(runner, "127.0.0.1", self.port).start()
            print(f"Hearth is at {self.url}", flush=True)
            print("Anyone with this address can use your agents; press Ctrl+C to stop.", flush=True)
            await stop.wait()
        finally:
            await runner.cleanup()


def run_web(data_dir: Path, *, port: int = 0) -> int:
    """Serve the shell until Ctrl+C. Returns the exit code."""
    command = shlex.join([sys.executable, "-m", "hearth", "shell", "--data-dir", str(data_dir)])
    server = TokenServer(command, port or _free_port(), secrets.token_urlsafe(24))
    asyncio.run(server.run())
    return 0
