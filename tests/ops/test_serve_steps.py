"""`manage.py serve`'s steps that need no child process: a taken port is refused before
anything else runs, and the migrations' progress counts each applied migration."""

import io
import socket

import pytest
from django.core.management import CommandError, call_command

from apps.common.progress import ProgressBar
from apps.web.management.commands.serve import _LineProgress, _MigrateWithProgress, _probe_url


def test_a_port_in_use_is_refused_with_the_knob_to_turn():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CommandError) as refused:
            call_command("serve", "--port", str(port))
    assert f"make run PORT={port + 1}" in str(refused.value)
    assert f"--port {port + 1}" in str(refused.value)


@pytest.mark.parametrize("progress_class", [ProgressBar, _LineProgress])
def test_each_applied_migration_moves_the_progress(progress_class):
    out = io.StringIO()
    progress = progress_class(out, "migrations", 3)
    migrate = _MigrateWithProgress(progress)
    for name in ("a.0001", "a.0002", "b.0001"):
        migrate.migration_progress_callback("apply_start", name)
        migrate.migration_progress_callback("apply_success", name)
    progress.close()
    assert progress.done == 3
    assert "3/3" in out.getvalue()


def test_health_is_probed_on_loopback_when_serving_every_address():
    assert _probe_url("0.0.0.0", 8001) == "http://127.0.0.1:8001/healthz"  # noqa: S104
    assert _probe_url("127.0.0.1", 8000) == "http://127.0.0.1:8000/healthz"
