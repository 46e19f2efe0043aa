"""The persistent shell: one long-lived bash per session, inside the OS sandbox built from the run's policy.

Each command is sent over stdin as `eval` of a quoted string, then a printf of a fresh random marker with the
exit code, so the end of the output is found without a pty and a syntax error cannot swallow the marker. The
working directory and exported variables persist between calls because the same bash runs them all. A timeout
or a cancelled call kills the whole sandbox (its process group) and the next call starts a fresh shell; output
is capped, keeping its head and its tail. A new policy for a session (network switched on) restarts its shell.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import shutil
import signal
import tempfile
from dataclasses import dataclass

from kernel.tools.result import ToolResult
from sandbox import Policy, ShellSandbox, Unavailable, open_dir
from sandbox.programs import program_refusal

__all__ = ["ShellPool", "quote_for_bash", "clip_text"]

_CHUNK = 65536
_KEEP_BYTES = 256 * 1024
_SAFE = re.compile(r"[A-Za-z0-9 _.,:;/=+@%^(){}\[\]<>|&*?!#~$`\"-]")


def quote_for_bash(text: str) -> str:
    """`text` as one bash ANSI-C quoted word (`$'...'`), whatever bytes it holds."""
    out = []
    for char in text:
        if _SAFE.fullmatch(char):
            out.append(char)
        else:
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8"))
    return "$'" + "".join(out) + "'"


def clip_text(text: str, cap: int) -> str:
    """`text` cut to about `cap` characters, keeping its head and tail and saying how much was left out."""
    if len(text) <= cap:
        return text
    half = cap // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters omitted ...]\n{text[-half:]}"


class _Capture:
    """The output of one command: head and tail kept, the middle counted, the end marker searched for."""

    def __init__(self, marker: bytes) -> None:
        self._end = re.compile(rb"\n" + re.escape(marker) + rb" (\d+)\n")
        self._data = bytearray()
        self._omitted = 0
        self._head = 0

    def feed(self, chunk: bytes) -> int | None:
        """Add output; return the exit code once the marker line is complete."""
        start = max(self._head, len(self._data) - len(self._end.pattern) - 8)
        self._data += chunk
        found = self._end.search(self._data, start)
        if found is not None:
            code = int(found.group(1))  # read before the buffer the match points into is cut
            del self._data[found.start() :]
            return code
        if len(self._data) > 2 * _KEEP_BYTES:
            # Keep the head once, then only a rolling tail long enough to still find the marker.
            self._head = self._head or _KEEP_BYTES
            cut = len(self._data) - _KEEP_BYTES
            self._omitted += cut - self._head
            del self._data[self._head : cut]
        return None

    def text(self) -> str:
        if not self._omitted:
            return self._data.decode("utf-8", "replace")
        head = self._data[: self._head].decode("utf-8", "replace")
        tail = self._data[self._head :].decode("utf-8", "replace")
        return f"{head}\n[... {self._omitted} bytes omitted ...]\n{tail}"


@dataclass(slots=True)
class _Shell:
    process: asyncio.subprocess.Process
    policy: Policy
    tmp_dir: str | None


class ShellPool:
    """Persistent sandboxed shells, one per session key; `close` ends a session's shell (agent deleted)."""

    def __init__(self, sandbox: ShellSandbox | Unavailable, *, output_cap: int = 30_000) -> None:
        self._sandbox = sandbox
        self._output_cap = output_cap
        self._shells: dict[str, _Shell] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def run(self, session: str, policy: Policy, command: str, timeout: float) -> ToolResult:
        """Run `command` in the session's shell, starting the shell if needed.

        The caller has already decided and approved the command; the OS sandbox confines what it reaches.

        Args:
            session: the session key (one per agent).
            policy: the run's policy; the sandbox mirrors it.
            command: the exact command line.
            timeout: seconds before the shell is killed and restarted.

        Returns:
            The output (stdout and stderr interleaved, capped) and the exit code.

        Raises:
            SandboxError: the workspace or memory directory is unsafe to mount (a symlink).
        """
        if isinstance(self._sandbox, Unavailable):
            return ToolResult(f"error: no shell is available: {self._sandbox.reason}", is_error=True)
        for program in (self._sandbox.executable, self._sandbox.bash):
            refusal = program_refusal(policy, program)
            if refusal is not None:
                return ToolResult(f"error: the shell is refused: {program}: {refusal}", is_error=True)
        async with self._locks.setdefault(session, asyncio.Lock()):
            shell = self._shells.get(session)
            if shell is not None and (shell.policy != policy or shell.process.returncode is not None):
                await self._stop(session)
                shell = None
            if shell is None:
                shell = await self._start(session, policy, self._sandbox)
            return await self._execute(session, shell, command, timeout)

    async def close(self, session: str) -> None:
        """End the session's shell and everything it started."""
        async with self._locks.setdefault(session, asyncio.Lock()):
            await self._stop(session)
        self._locks.pop(session, None)

    async def close_all(self) -> None:
        """End every shell (kernel shutdown)."""
        for session in list(self._shells):
            await self.close(session)

    async def _start(self, session: str, policy: Policy, sandbox: ShellSandbox) -> _Shell:
        os.close(open_dir(policy.workspace, create_for=policy))
        for mounted in filter(None, (policy.work_dir, policy.memory_dir)):
            # A mount source must not be a symlink: bind mounts follow them.
            with contextlib.suppress(FileNotFoundError):
                os.close(open_dir(mounted))
        tmp_dir = tempfile.mkdtemp(prefix="hearth-shell-") if sandbox.kind == "landlock" else None
        launch = sandbox.launch(policy, tmp_dir=tmp_dir)
        process = await asyncio.create_subprocess_exec(
            *launch.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=dict(launch.env),
            cwd=launch.cwd,
            start_new_session=True,
        )
        shell = _Shell(process, policy, tmp_dir)
        self._shells[session] = shell
        return shell

    async def _execute(self, session: str, shell: _Shell, command: str, timeout: float) -> ToolResult:
        process = shell.process
        assert process.stdin is not None and process.stdout is not None
        marker = f"__HEARTH_DONE_{secrets.token_hex(12)}__"
        script = f'__hearth_cmd={quote_for_bash(command)}\neval "$__hearth_cmd" </dev/null\n'
        script += f"printf '\\n%s %d\\n' {marker} \"$?\"\n"
        capture = _Capture(marker.encode())
        code: int | None = None
        try:
            async with asyncio.timeout(timeout):
                process.stdin.write(script.encode("utf-8"))
                with contextlib.suppress(ConnectionError):
                    await process.stdin.drain()
                while code is None:
                    chunk = await process.stdout.read(_CHUNK)
                    if not chunk:
                        break
                    code = capture.feed(chunk)
        except TimeoutError:
            await self._stop(session, kill=True)
            note = f"[timed out after {timeout:g}s; the shell was restarted: its directory and environment are reset]"
            return self._result(capture.text(), note, is_error=True)
        except asyncio.CancelledError:
            await self._stop(session, kill=True)
            raise
        if code is None:
            status = await process.wait()
            await self._stop(session)
            note = f"[the shell exited with code {status}; the next command starts a new shell]"
            return self._result(capture.text(), note, is_error=True)
        return self._result(capture.text(), f"[exit code {code}]", is_error=code != 0)

    def _result(self, output: str, note: str, *, is_error: bool) -> ToolResult:
        output = clip_text(output, self._output_cap)
        if output and not output.endswith("\n"):
            output += "\n"
        return ToolResult(output + note, is_error=is_error)

    async def _stop(self, session: str, *, kill: bool = False) -> None:
        shell = self._shells.pop(session, None)
        if shell is None:
            return
        process = shell.process
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        if not kill:
            # Closing stdin lets an idle bash exit by itself; a busy one is killed below.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2):
                    await process.wait()
        # Background jobs share the shell's process group; kill the group even after bash itself ended.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        if shell.tmp_dir is not None:
            shutil.rmtree(shell.tmp_dir, ignore_errors=True)
