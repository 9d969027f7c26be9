import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from apps.ops.log_formats import JsonFormatter, TextFormatter

ROOT = Path(__file__).resolve().parents[2]


def _record(msg: str = "published %s", args: tuple = ("r-1",), **extra) -> logging.LogRecord:
    record = logging.LogRecord("apps.renditions", logging.INFO, __file__, 1, msg, args, None)
    record.__dict__.update(extra)
    return record


def test_json_lines_carry_the_context_ids_given():
    line = JsonFormatter().format(
        _record(workspace_id=7, publication_id=11, rendition_id=13, job_id=17, other="x")
    )
    entry = json.loads(line)
    assert entry["level"] == "INFO"
    assert entry["logger"] == "apps.renditions"
    assert entry["message"] == "published r-1"
    assert entry["timestamp"].endswith("+00:00")
    assert (entry["workspace_id"], entry["publication_id"]) == (7, 11)
    assert (entry["rendition_id"], entry["job_id"]) == (13, 17)
    assert "other" not in entry
    assert "\n" not in line


def test_json_lines_keep_the_traceback_on_one_line():
    try:
        raise ValueError("boom")
    except ValueError:
        record = _record(exc_info=sys.exc_info())
        record.exc_info = sys.exc_info()
    line = JsonFormatter().format(record)
    assert "\n" not in line
    assert "ValueError: boom" in json.loads(line)["exception"]


def test_text_lines_append_the_context_ids():
    line = TextFormatter().format(_record(job_id=17))
    assert line.endswith("INFO apps.renditions: published r-1 [job_id=17]")


def _run_and_log(log_format: str) -> subprocess.CompletedProcess:
    code = (
        "import logging; logging.getLogger('apps.jobs').warning("
        "'claimed', extra={'job_id': 42, 'workspace_id': 3})"
    )
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env={**os.environ, "LOG_FORMAT": log_format},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_log_format_json_is_selected_from_the_environment():
    result = _run_and_log("json")
    assert result.returncode == 0, result.stderr
    entries = [json.loads(line) for line in result.stderr.splitlines()]
    claimed = [e for e in entries if e["message"] == "claimed"]
    assert claimed == [
        {
            "timestamp": claimed[0]["timestamp"],
            "level": "WARNING",
            "logger": "apps.jobs",
            "message": "claimed",
            "workspace_id": 3,
            "job_id": 42,
        }
    ]


def test_an_unknown_log_format_fails_at_startup():
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**os.environ, "LOG_FORMAT": "xml"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "LOG_FORMAT must be 'json' or 'text'" in result.stderr
