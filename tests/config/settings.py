"""Settings of the test run: the product's settings, with the keys production requires.

The tests run with DEBUG false, as production does, so SECRET_KEY and ENCRYPTION_KEYS must
be set; unless the environment names its own, each run draws fresh ones here. They go into
the environment, so the processes the tests start (workers, gunicorn) share them.

The suite's own database work is not production's: creating and dropping the test database
on a loaded machine may take longer than a statement may, and a test holds its transaction
open while it waits on a child process. So no statement or idle-transaction bound by default
here (the lock timeout stays); tests/test_settings.py checks production's bounds.
"""

import base64
import os
import secrets

os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
os.environ.setdefault(
    "ENCRYPTION_KEYS", "t1:" + base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
)

os.environ.setdefault("DB_STATEMENT_TIMEOUT_S", "0")
os.environ.setdefault("DB_IDLE_IN_TRANSACTION_TIMEOUT_S", "0")

from config.settings import *  # noqa: E402, F403

# The maintenance switch is read once per cache window, and every page now reads it for its
# banner: a window that ran out between two requests of a test (a slow runner) would add a
# query to the second and break the query-count pins. Tests read it once (tests/conftest.py
# clears it before each test); the tests of the window itself set their own.
MAINTENANCE_CACHE_S = 3600.0

# Tests that commit are cleaned up by DELETE, not TRUNCATE (tests/config/flush_by_delete).
DATABASES["default"]["ENGINE"] = "tests.config.flush_by_delete"  # noqa: F405
