"""The CLI as a user runs it: `python -m socialpost_cli` in a subprocess, against the
project served by pytest-django's live server, with its own config dir and environment."""

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache

from tests.factories import SocialAccountFactory

ROOT = Path(django_settings.BASE_DIR)


@dataclass
class Outcome:
    code: int
    out: str
    err: str


@pytest.fixture
def site(live_server, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    cache.clear()  # the per-token rate limits
    yield live_server.url
    cache.clear()


@pytest.fixture
def token_a(workspace_a, make_token):
    return make_token(workspace_a).clear


@pytest.fixture
def cli_env(tmp_path):
    """The environment every run starts from: no credentials, a private HOME and config dir."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPOST_")}
    return {**keep, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


@pytest.fixture
def cli(site, token_a, cli_env):
    """run(*args, token=..., stdin=..., env=...) -> Outcome. Logged in through the
    environment (SOCIALPOST_URL/SOCIALPOST_TOKEN) unless token=None."""

    def run(*args: str, token: str | None = token_a, stdin: str = "", **env: str) -> Outcome:
        environment = dict(cli_env)
        if token is not None:
            environment.update(SOCIALPOST_URL=site, SOCIALPOST_TOKEN=token)
        environment.update(env)
        result = subprocess.run(
            [sys.executable, "-m", "socialpost_cli", *args],
            cwd=ROOT,
            env=environment,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return Outcome(result.returncode, result.stdout, result.stderr)

    return run


@pytest.fixture
def sandy(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="sandy")


@pytest.fixture
def sandra(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="sandra")


@pytest.fixture
def account_b(workspace_b):
    return SocialAccountFactory(workspace=workspace_b, platform="sandbox", handle="outsider")
