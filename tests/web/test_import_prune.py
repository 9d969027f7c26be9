"""The CSV import's state files are removed once an import has been left alone for a day."""

import os
import time
from pathlib import Path

import pytest
from django.conf import settings

from apps.web import csv_import
from tests.web.test_import import import_id, run_all, soon, upload

DAY = 24 * 3600


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _folder(workspace, ident: str) -> Path:
    return Path(settings.MEDIA_ROOT) / "imports" / str(workspace.pk) / ident


def _age(folder: Path, seconds: float) -> None:
    """Make every file of the folder look written `seconds` ago."""
    when = time.time() - seconds
    for path in folder.iterdir():
        os.utime(path, (when, when))


def test_a_new_upload_removes_imports_left_for_a_day_and_keeps_the_others(
    as_bob, news, workspace_a
):
    rows = f"text,scheduled_at,destinations\nHello,{soon()},@news\n"
    finished = import_id(upload(as_bob, rows))
    run_all(as_bob, finished)
    abandoned = import_id(upload(as_bob, rows))  # previewed, never run
    recent = import_id(upload(as_bob, rows))
    _age(_folder(workspace_a, finished), DAY + 60)
    _age(_folder(workspace_a, abandoned), DAY + 60)
    _age(_folder(workspace_a, recent), DAY - 600)

    newest = import_id(upload(as_bob, rows))

    assert not _folder(workspace_a, finished).exists()
    assert not _folder(workspace_a, abandoned).exists()
    assert (_folder(workspace_a, recent) / "items.json").exists()
    assert (_folder(workspace_a, newest) / "items.json").exists()
    assert as_bob.get(f"/w/ws-a/posts/import/{finished}/").status_code == 404
    assert as_bob.get(f"/w/ws-a/posts/import/{recent}/").status_code == 200


def test_pruning_with_no_imports_yet_is_a_no_op():
    assert csv_import.imports_prune() == 0
