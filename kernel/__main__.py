"""`python -m kernel`: serve one host over stdio; logs go to stderr."""

from __future__ import annotations

import asyncio
import logging
import sys

from kernel.server import KernelServer
from protocol.transport import stdio_transport


async def _main() -> None:
    async with stdio_transport() as transport:
        await KernelServer().serve(transport)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s kernel %(levelname)s: %(message)s")
    asyncio.run(_main())
