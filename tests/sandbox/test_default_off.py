"""The sandbox is a test mode: off in production unless enabled explicitly, and the
deploy manifests leave it off."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _sandbox_enabled(**env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SANDBOX_ENABLED")}
    code = "from django.conf import settings; print(settings.SANDBOX_ENABLED)"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.slow  # child processes
def test_the_sandbox_follows_debug_unless_set():
    assert _sandbox_enabled(DEBUG="false") == "False"
    assert _sandbox_enabled(DEBUG="true") == "True"
    assert _sandbox_enabled(DEBUG="false", SANDBOX_ENABLED="true") == "True"


def test_the_deploy_manifests_do_not_enable_the_sandbox():
    for path in (ROOT / "deploy").rglob("*"):
        if path.is_file() and path.suffix in (".yaml", ".yml", ".example", ""):
            for line in path.read_text(errors="ignore").splitlines():
                if "SANDBOX_ENABLED" in line and not line.lstrip().startswith("#"):
                    assert "true" not in line.lower(), f"{path}: {line}"


@pytest.mark.django_db
def test_a_disabled_sandbox_refuses_new_accounts_in_the_api(api_a, settings):
    settings.SANDBOX_ENABLED = False
    response = api_a.post("/api/v1/accounts", {"platform": "sandbox", "handle": "x"}, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "SANDBOX_DISABLED"
