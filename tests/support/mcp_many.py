"""An MCP server with sixty tools, for the tests of the prompt budget: fifty-nine gauges and `reverse_text`."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("many")


def _gauge(number: int) -> None:
    def read_gauge(unit: str = "si") -> str:
        return f"gauge {number} reads {number * 7} ({unit})"

    server.add_tool(
        read_gauge,
        name=f"gauge_{number:02d}",
        description=f"Read pressure gauge number {number} of the boiler room, in the unit given.",
    )


for _number in range(59):
    _gauge(_number)


@server.tool()
def reverse_text(text: str) -> str:
    """Reverse the characters of a text."""
    return text[::-1]


if __name__ == "__main__":
    server.run("stdio")
