"""Settings of the test run: the product's settings, with the keys production requires.

The tests run with DEBUG false, as production does, so SECRET_KEY and ENCRYPTION_KEYS must
be set; unless the environment names its own, each run draws fresh ones here. They go into
the environment, so the processes the tests start (workers, gunicorn) share them.
"""

import base64
import os
import secrets

os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
os.environ.setdefault(
    "ENCRYPTION_KEYS", "t1:" + base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
)

from config.settings import *  # noqa: E402, F403
