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


# Secrets in URLs never reach a log line.

OAUTH_CODE = "oauth-code-5f1c9e"
OAUTH_STATE = "oauth-state-77ab21"
MEDIA_TOKEN = "signed-media-token-9d8e7f"
AMZ_SIGNATURE = "amz-signature-0badcafe"


def test_request_lines_lose_codes_tokens_and_signatures_but_keep_the_rest():
    from apps.ops.access_log import redact_request_line, redact_url

    line = redact_request_line(
        f"GET /accounts/callback/x?code={OAUTH_CODE}&state={OAUTH_STATE}&workspace=ws-a HTTP/1.1"
    )
    assert line == (
        "GET /accounts/callback/x?code=[redacted]&state=[redacted]&workspace=ws-a HTTP/1.1"
    )
    assert redact_url(f"/media/signed/{MEDIA_TOKEN}") == "/media/signed/[redacted]"
    assert redact_url("/reset/MQ/cdx-4f1e2a/") == "/reset/MQ/[redacted]/"
    presigned = redact_url(
        "https://bucket.s3.example.com/media/a.mp4?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential=AKIA%2F20260101&X-Amz-Signature={AMZ_SIGNATURE}"
        "&X-Amz-Security-Token=FwoG&upload_token=u-1"
    )
    assert AMZ_SIGNATURE not in presigned and "AKIA" not in presigned and "FwoG" not in presigned
    assert "u-1" not in presigned
    assert presigned.startswith("https://bucket.s3.example.com/media/a.mp4?X-Amz-Algorithm=AWS4")
    assert redact_url("/api/v1/publications?page=2&status=draft") == (
        "/api/v1/publications?page=2&status=draft"
    )


def test_django_request_warnings_are_redacted():
    from apps.ops.access_log import RedactSecretsFilter

    record = logging.LogRecord(
        "django.request", logging.WARNING, __file__, 1, "Not Found: %s",
        (f"/media/signed/{MEDIA_TOKEN}",), None,
    )  # fmt: skip
    assert RedactSecretsFilter().filter(record)
    assert record.getMessage() == "Not Found: /media/signed/[redacted]"


def test_gunicorn_access_lines_carry_no_secrets(tmp_path):
    import socket
    import time

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        **os.environ,
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
        "LOG_FORMAT": "text",
    }
    log = tmp_path / "access.log"
    base = f"http://127.0.0.1:{port}"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "config.wsgi"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx.get(f"{base}/healthz", trust_env=False)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, log.read_text()
                    time.sleep(0.1)
            with httpx.Client(base_url=base, trust_env=False) as client:
                client.get(
                    f"/accounts/connect/x/callback?code={OAUTH_CODE}&state={OAUTH_STATE}",
                    headers={"Referer": f"https://x.com/i/oauth2?code={OAUTH_CODE}"},
                )
                client.get(f"/media/signed/{MEDIA_TOKEN}")
                client.get(f"/static/a.mp4?X-Amz-Signature={AMZ_SIGNATURE}")
                client.get("/healthz")
        finally:
            server.terminate()
            server.wait(timeout=30)
    text = log.read_text()
    assert "/healthz" in text and "[redacted]" in text
    for secret in (OAUTH_CODE, OAUTH_STATE, MEDIA_TOKEN, AMZ_SIGNATURE):
        assert secret not in text
