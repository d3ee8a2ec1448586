"""Drive `world serve` (/mcp/) or `world mcp` (stdio) with the official MCP Python SDK.

Usage: python mcp_sdk.py http URL TOKEN MODE      (MODE: legacy | auto | 2026-07-28)
       python mcp_sdk.py stdio WORLD DB TOKENFILE MODE

Prints one JSON object with what the SDK saw; tests/sdk_interop.rs checks it. Any exception
from the SDK on a call that must work propagates (exit 1), so a workaround-free run is the test.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


async def drive(server, mode):
    out = {}
    async with Client(server, mode=mode) as client:
        out["protocolVersion"] = client.protocol_version
        info = client.server_info
        out["serverName"] = info.name if info is not None else None
        tools = await client.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        # A pure tool.
        r = await client.call_tool("echo", {"sdk": True})
        out["echo"] = {"isError": bool(r.is_error), "structured": r.structured_content}
        # An effectful tool (Workspace.Read).
        r = await client.call_tool("readcount", {"path": "notes.txt"})
        out["readcount"] = {
            "isError": bool(r.is_error),
            "effects": (r.structured_content or {}).get("world", {}).get("effects"),
        }
        # Bad arguments: a tool error the model can read, not an exception.
        r = await client.call_tool("readcount", {"path": 1})
        out["bad"] = {
            "isError": bool(r.is_error),
            "text": r.content[0].text if r.content else None,
        }
        # Unknown tool: a protocol error.
        try:
            await client.call_tool("no_such_tool", {})
            out["unknown"] = None
        except MCPError as e:
            out["unknown"] = {"code": e.error.code, "message": e.error.message}
    return out


def main():
    kind = sys.argv[1]
    if kind == "http":
        url, token, mode = sys.argv[2], sys.argv[3], sys.argv[4]
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        server = streamable_http_client(url, http_client=http, terminate_on_close=False)
    else:
        world, db, tokfile, mode = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
        server = StdioServerParameters(command=world, args=["--db", db, "mcp", "--session", tokfile])
    print(json.dumps(asyncio.run(drive(server, mode))))


if __name__ == "__main__":
    main()
