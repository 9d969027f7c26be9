"""`socialpost`: the command-line client of the publishing API.

It speaks only HTTP to the public API (``/api/v1/``) with an API token; every rule (limits,
scopes, schedules, workspaces) is the server's. It never imports Django or the project's
models, so it runs anywhere ``httpx`` does.
"""

__version__ = "0.1.0"
