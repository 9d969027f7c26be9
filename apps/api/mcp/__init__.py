"""The MCP endpoint (Model Context Protocol, streamable HTTP) at ``/mcp``.

A second door into the same API for AI agents: every tool parses its input with the API's
serializers, calls the same services, checks the same scopes and workspace, and answers
with the API's output shapes and error envelope. It is an ASGI application (the MCP SDK is
async); ``config.asgi`` serves it beside Django (see docs/mcp.md).

- ``auth``: the HTTP door: allowed hosts, ``Authorization: Bearer``, the ``mcp`` scope;
- ``tools``: the tools and their permission rules;
- ``app``: the ASGI application, and the dispatcher that puts it beside Django.
"""
