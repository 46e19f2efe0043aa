"""`hearth web`: the shell in a browser on 127.0.0.1, and nothing for a request without the printed token."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.support.host_process import REPO_ROOT


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(status, body, Set-Cookie) of a GET, without following anything."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, response.read().decode("utf-8", "replace"), response.headers.get("Set-Cookie", "")
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode("utf-8", "replace"), ""


def test_the_page_needs_the_token_and_the_token_opens_it(tmp_path: Path) -> None:
    web = subprocess.Popen(
        [sys.executable, "-m", "hearth", "web", "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPO_ROOT,
    )
    try:
        assert web.stdout is not None
        line = web.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:(\d+))/\?token=(\S+)", line)
        assert found is not None, line
        base, token = found.group(1), found.group(3)
        status, page, cookie = _get(f"{base}/?token={token}")
        assert status == 200 and "ws://127.0.0.1" in page and "/ws" in page
        assert "hearth_token=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        for refused in (f"{base}/", f"{base}/?token=guess", f"{base}/ws", f"{base}/static/js/textual.js"):
            code, body, _ = _get(refused)
            assert code == 403 and "token" in body, refused
        # The cookie the page set opens its own assets; another Host header (DNS rebinding) does not.
        assert _get(f"{base}/static/js/textual.js", {"Cookie": f"hearth_token={token}"})[0] == 200
        assert _get(f"{base}/?token={token}", {"Host": "attacker.example"})[0] == 403
    finally:
        web.send_signal(signal.SIGINT)
        code = web.wait(timeout=20)
        if web.stdout is not None:
            web.stdout.close()
    assert code == 0
