"""Reading a CSV of posts into bulk-create items, and keeping an import's state between
the requests that preview and run it.

A file has a header row naming at least ``text``, ``scheduled_at`` and ``destinations``
(``reference_key`` optional, other columns ignored). Per row:

- ``scheduled_at``: an ISO-8601 instant with an offset, or a wall-clock time without one,
  read in the importing user's display zone;
- ``destinations``: account handles (``@`` optional) or account ids, separated by ``;``;
- ``reference_key``: the row's key, unique in the workspace. A row without one gets
  ``import:<import id>:<row number>``, so a batch that runs twice (a retried request)
  creates nothing twice, while uploading the same file again is a new import.

An import is stored (default storage, ``imports/<workspace id>/<import id>/``) as its items,
written once at upload, and one result file per batch of BATCH_SIZE rows, written when
the batch has run. A batch whose result exists is never run again. Imports untouched for
a day (finished or abandoned) are removed when the next import is uploaded
(``imports_prune``).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.utils import timezone

from apps.accounts.models import SocialAccount, Workspace
from apps.publishing.services.bulk import MAX_BULK_ITEMS

MAX_ROWS = 40_000
MAX_FILE_BYTES = 50 * 1024 * 1024
BATCH_SIZE = MAX_BULK_ITEMS
REQUIRED_COLUMNS = ("text", "scheduled_at", "destinations")
IMPORTS_ROOT = "imports"


class ImportFileError(Exception):
    """The file cannot be imported at all (not CSV, missing columns, too many rows)."""


@dataclass
class ImportState:
    """An uploaded import: its rows as bulk items (or the row's own error), and who made it."""

    import_id: str
    workspace_id: int
    user_id: int
    file_name: str
    schedule: bool
    items: list[dict]  # each {"row": n, "item": {...}} or {"row": n, "error": {...}, "text"}

    @property
    def batches(self) -> int:
        return (len(self.items) + BATCH_SIZE - 1) // BATCH_SIZE

    def batch(self, number: int) -> list[dict]:
        return self.items[number * BATCH_SIZE : (number + 1) * BATCH_SIZE]


def _read_text(upload: UploadedFile) -> str:
    if upload.size is not None and upload.size > MAX_FILE_BYTES:
        raise ImportFileError(
            f"The file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB; split it."
        )
    raw = upload.read()
    if b"\x00" in raw[:4096]:
        raise ImportFileError("This is not a CSV file (it holds binary data).")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportFileError("The file is not UTF-8 text; save it as CSV (UTF-8).") from None


def read_rows(upload: UploadedFile) -> list[dict[str, str]]:
    """The file's data rows, keyed by lower-cased column name; ImportFileError if the file
    cannot be imported."""
    text = _read_text(upload)
    if not text.strip():
        raise ImportFileError("The file is empty.")
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = [name.strip().lower() for name in reader.fieldnames or []]
    except csv.Error as exc:
        raise ImportFileError(f"The file is not valid CSV: {exc}.") from None
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        raise ImportFileError(
            f"The header row lacks the column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)}. Expected: text, scheduled_at, destinations and "
            "optionally reference_key."
        )
    reader.fieldnames = header
    rows: list[dict[str, str]] = []
    try:
        for row in reader:
            if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
                continue  # a blank line
            if len(rows) >= MAX_ROWS:
                raise ImportFileError(
                    f"The file has more than {MAX_ROWS:,} rows; split it into smaller files."
                )
            rows.append({k: v if isinstance(v, str) else "" for k, v in row.items() if k})
    except csv.Error as exc:
        message = f"The file is not valid CSV (line {reader.line_num}): {exc}."
        raise ImportFileError(message) from None
    if not rows:
        raise ImportFileError("The file has a header but no rows.")
    return rows


class _Accounts:
    """The workspace's accounts by id and by handle, to read the destinations column."""

    def __init__(self, workspace: Workspace) -> None:
        accounts = list(SocialAccount.objects.for_workspace(workspace))
        self.ids = {account.pk for account in accounts}
        self.by_handle: dict[str, list[SocialAccount]] = {}
        for account in accounts:
            self.by_handle.setdefault(account.handle.lower(), []).append(account)

    def resolve(self, token: str) -> int | str:
        """The account id for a handle or id, or a message saying why there is none."""
        if token.isdigit():
            return int(token) if int(token) in self.ids else f"No account with id {token}."
        found = self.by_handle.get(token.lstrip("@").lower(), [])
        if not found:
            return f"No account @{token.lstrip('@')} in this workspace."
        if len(found) > 1:
            return f"Several accounts are @{token.lstrip('@')}; use the account id."
        return found[0].pk


def _row_error(message: str, field: str) -> dict:
    return {"code": "VALIDATION_ERROR", "message": message, "details": {field: [message]}}


def _time_fields(value: str, zone: str) -> dict:
    """scheduled_at for an instant with an offset, else local_time in the user's zone
    (a value that is no time at all is passed on for the service to refuse)."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return {"scheduled_at": value}
    if parsed.tzinfo is None:
        return {"local_time": value, "timezone": zone}
    return {"scheduled_at": value}


def rows_to_items(
    rows: list[dict[str, str]],
    *,
    workspace: Workspace,
    zone: str,
    schedule: bool,
    import_id: str,
) -> list[dict]:
    """Each row as a bulk item (``{"row", "item"}``), or its own error (``{"row",
    "error"}``) when its destinations or time cannot be read. Rows count from 1."""
    accounts = _Accounts(workspace)
    out: list[dict] = []
    for number, row in enumerate(rows, start=1):
        destinations: list[dict] = []
        problem = None
        tokens = [t.strip() for t in row.get("destinations", "").split(";") if t.strip()]
        for token in tokens:
            resolved = accounts.resolve(token)
            if isinstance(resolved, str):
                problem = _row_error(resolved, "destinations")
                break
            if {"account": resolved} not in destinations:
                destinations.append({"account": resolved})
        when = row.get("scheduled_at", "").strip()
        if problem is None and schedule and not when:
            problem = _row_error("Give a time to schedule this post.", "scheduled_at")
        if problem is None and schedule and not destinations:
            problem = _row_error("Give at least one destination.", "destinations")
        if problem is not None:
            out.append({"row": number, "error": problem, "text": row.get("text", "")})
            continue
        item: dict = {
            "text": row.get("text", ""),
            "destinations": destinations,
            "status": "scheduled" if schedule else "draft",
            "reference_key": row.get("reference_key", "").strip() or f"import:{import_id}:{number}",
        }
        if when:
            item.update(_time_fields(when, zone))
        out.append({"row": number, "item": item})
    return out


def new_import_id() -> str:
    return secrets.token_hex(8)


def _folder(workspace_id: int, import_id: str) -> str:
    return f"{IMPORTS_ROOT}/{workspace_id}/{import_id}"


def _write_json(path: str, data: object) -> None:
    if default_storage.exists(path):
        default_storage.delete(path)
    default_storage.save(path, ContentFile(json.dumps(data).encode()))


def save_state(state: ImportState) -> None:
    _write_json(
        f"{_folder(state.workspace_id, state.import_id)}/items.json",
        {
            "user_id": state.user_id,
            "file_name": state.file_name,
            "schedule": state.schedule,
            "items": state.items,
        },
    )


def load_state(workspace: Workspace, import_id: str) -> ImportState | None:
    """The import of this workspace, or None (unknown id, or another workspace's)."""
    if not import_id.isalnum():
        return None
    path = f"{_folder(workspace.pk, import_id)}/items.json"
    if not default_storage.exists(path):
        return None
    with default_storage.open(path) as handle:
        data = json.load(handle)
    return ImportState(
        import_id=import_id,
        workspace_id=workspace.pk,
        user_id=data["user_id"],
        file_name=data["file_name"],
        schedule=data["schedule"],
        items=data["items"],
    )


def _result_path(state: ImportState, number: int) -> str:
    return f"{_folder(state.workspace_id, state.import_id)}/batch-{number}.json"


def load_result(state: ImportState, number: int) -> list[dict] | None:
    path = _result_path(state, number)
    if not default_storage.exists(path):
        return None
    with default_storage.open(path) as handle:
        return json.load(handle)


def save_result(state: ImportState, number: int, rows: list[dict]) -> None:
    _write_json(_result_path(state, number), rows)


def batches_done(state: ImportState) -> int:
    """How many batches have run (they run in order)."""
    done = 0
    while done < state.batches and default_storage.exists(_result_path(state, done)):
        done += 1
    return done


# An import untouched this long (finished, or abandoned half-way) has its files removed.
STATE_MAX_AGE = timedelta(days=1)


def _files(folder: str) -> list[str]:
    try:
        _dirs, files = default_storage.listdir(folder)
    except FileNotFoundError:
        return []
    return [f"{folder}/{name}" for name in files]


def _remove_folder(folder: str) -> None:
    """The now empty folder itself, on storages that have folders (a bucket has none)."""
    try:
        path = default_storage.path(folder)
    except NotImplementedError:
        return
    with contextlib.suppress(OSError):
        os.rmdir(path)


def imports_prune(*, now: datetime | None = None) -> int:
    """Delete the files of every import whose last file was written more than
    STATE_MAX_AGE ago: finished ones, and ones abandoned before their last batch (a batch
    writes its result file, so an import that is running is never that old). Returns how
    many imports went."""
    cutoff = (now or timezone.now()) - STATE_MAX_AGE
    pruned = 0
    try:
        workspaces, _files_at_top = default_storage.listdir(IMPORTS_ROOT)
    except FileNotFoundError:
        return 0
    for workspace_dir in workspaces:
        imports, _ = default_storage.listdir(f"{IMPORTS_ROOT}/{workspace_dir}")
        for import_dir in imports:
            folder = f"{IMPORTS_ROOT}/{workspace_dir}/{import_dir}"
            files = _files(folder)
            if files and max(default_storage.get_modified_time(f) for f in files) >= cutoff:
                continue
            for path in files:
                default_storage.delete(path)
            _remove_folder(folder)
            pruned += 1
        if not default_storage.listdir(f"{IMPORTS_ROOT}/{workspace_dir}")[0]:
            _remove_folder(f"{IMPORTS_ROOT}/{workspace_dir}")
    return pruned
