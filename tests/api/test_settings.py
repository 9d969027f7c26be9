import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("API_THROTTLE_RATE", "lots", "API_THROTTLE_RATE looks like 600/min"),
        ("IDEMPOTENCY_RETENTION_HOURS", "0", "IDEMPOTENCY_RETENTION_HOURS must be positive"),
    ],
)
def test_a_malformed_api_setting_fails_at_startup(name, value, message):
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", name: value},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert message in result.stderr
