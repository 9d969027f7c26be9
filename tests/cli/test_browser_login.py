"""`socialpost login --browser`: the command shows a code and a link, a person confirms
it in the browser, and the command stores the token it then receives (the command line's,
listed as such)."""

import json
import re
import subprocess
import sys

import pytest

from apps.accounts.cli_login import cli_login_confirm
from apps.accounts.models import ApiToken
from tests.cli.conftest import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


def test_login_in_the_browser_stores_a_cli_token(
    site, settings, cli_env, workspace_a, bob, tmp_path
):
    settings.SITE_URL = site  # the link to confirm is built from it, as in emails
    command = subprocess.Popen(
        [sys.executable, "-m", "socialpost_cli", "login", "--url", site, "--browser"],
        cwd=ROOT,
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert command.stderr is not None
        shown = command.stderr.readline() + command.stderr.readline()
        found = re.search(r"confirm the code ([A-Z]{4}-[A-Z]{4})", shown)
        assert found, shown
        assert f"{site}/cli/login/?code={found.group(1)}" in shown

        cli_login_confirm(
            user_code=found.group(1), user=bob, workspace=workspace_a, scopes=["read", "write"]
        )
        out, err = command.communicate(timeout=30)
    finally:
        command.kill()

    assert command.returncode == 0, err
    assert "Workspace A" in out and "read, write" in out
    token = ApiToken.objects.get(client=ApiToken.Client.CLI)
    assert (token.created_by, token.scopes) == (bob, ["read", "write"])
    stored = json.loads((tmp_path / "config" / "socialpost" / "config.json").read_text())
    assert stored["url"] == site and stored["token"].startswith(token.prefix)


def test_browser_and_token_together_is_a_usage_error(cli, site):
    result = cli("login", "--url", site, "--browser", "--token", "sp_x", token=None)

    assert result.code != 0
    assert "not both" in result.err
