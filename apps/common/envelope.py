"""The error body every JSON answer shares: `{"error": {"code", "message", "details"}}`.

The API's exception handler, the MCP tools and the maintenance middleware all answer in it,
so it lives below them."""


def envelope(code: str, message: str, details: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}
