"""Production defaults: `check --deploy` is clean from an https SITE_URL and the keys alone,
missing or example keys stop the process, and every database session is time-bounded."""

import base64
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _random_encryption_key(key_id: str = "k1") -> str:
    return f"{key_id}:" + base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()


def production_env(**overrides: str) -> dict:
    """What an operator sets: DEBUG off, the public https address, hosts and the keys.
    Nothing about cookies, redirects or HSTS."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SECURE_") and not k.endswith("_COOKIE_SECURE")
    }
    env.update(
        # The product's settings, not the test run's (which fill in missing keys).
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="false",
        SITE_URL="https://post.example.com",
        ALLOWED_HOSTS="post.example.com",
        SECRET_KEY=secrets.token_urlsafe(50),
        ENCRYPTION_KEYS=_random_encryption_key(),
    )
    env.update(overrides)
    return env


def _manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _setting(env: dict, expression: str) -> str:
    code = f"from django.conf import settings; print(repr({expression}))"
    result = _manage(env, "shell", "-c", code)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def _env_example() -> dict[str, str]:
    text = (ROOT / "deploy" / ".env.example").read_text()
    return dict(re.findall(r"^([A-Z][A-Z0-9_]*)=(.*)$", text, re.MULTILINE))


def test_check_deploy_is_clean_from_an_https_site_url_and_the_keys_alone():
    result = _manage(production_env(), "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_https_hardening_follows_site_url_and_stays_overridable():
    secure = (
        "(settings.SECURE_SSL_REDIRECT, settings.SESSION_COOKIE_SECURE, "
        "settings.CSRF_COOKIE_SECURE, settings.SECURE_HSTS_SECONDS, "
        "settings.SECURE_HSTS_INCLUDE_SUBDOMAINS, settings.SECURE_HSTS_PRELOAD)"
    )
    assert _setting(production_env(), secure) == "(True, True, True, 31536000, True, True)"
    plain = production_env(SITE_URL="http://127.0.0.1:8000")
    assert _setting(plain, secure) == "(False, False, False, 0, False, False)"
    trial = production_env(SECURE_SSL_REDIRECT="false", SECURE_HSTS_SECONDS="60")
    assert _setting(trial, secure) == "(False, True, True, 60, True, True)"


def test_the_proxy_header_is_trusted_only_when_named():
    assert _setting(production_env(), "settings.SECURE_PROXY_SSL_HEADER") == "None"
    behind = production_env(SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto")
    assert _setting(behind, "settings.SECURE_PROXY_SSL_HEADER") == (
        "('HTTP_X_FORWARDED_PROTO', 'https')"
    )


@pytest.mark.parametrize("name", ["SECRET_KEY", "ENCRYPTION_KEYS"])
def test_production_refuses_to_start_without_a_key(name, tmp_path):
    env = production_env(VAR_DIR=str(tmp_path))
    del env[name]
    result = _manage(env, "check")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert f"{name} is not set" in result.stderr
    # Nothing generated behind the operator's back.
    assert not (tmp_path / "secrets.json").exists()


@pytest.mark.parametrize("name", ["SECRET_KEY", "ENCRYPTION_KEYS"])
def test_the_env_example_values_are_refused(name):
    example = _env_example()[name]
    result = _manage(production_env(**{name: example}), "check")
    assert result.returncode != 0
    assert f"{name}" in result.stderr and "example value" in result.stderr


def test_local_work_with_debug_generates_its_keys_once(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "ENCRYPTION_KEYS")}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", DEBUG="true", VAR_DIR=str(tmp_path))
    # A database named, so reading the settings starts no embedded server in tmp_path (one
    # was left running after the test); nothing here connects to it.
    env["DATABASE_URL"] = "postgres://nobody@127.0.0.1:1/unused"
    first = _setting(env, "(settings.SECRET_KEY, settings.ENCRYPTION_KEYS)")
    assert (tmp_path / "secrets.json").stat().st_mode & 0o777 == 0o600
    assert _setting(env, "(settings.SECRET_KEY, settings.ENCRYPTION_KEYS)") == first


def test_a_non_postgres_database_url_fails_fast():
    env = {**os.environ, "DATABASE_URL": "sqlite:///db.sqlite3"}
    result = _manage(env, "check")
    assert result.returncode != 0
    assert "must point at PostgreSQL" in result.stderr


def test_every_production_session_carries_the_default_timeouts():
    env = {k: v for k, v in production_env().items() if not k.startswith("DB_")}
    code = (
        "from django.db import connection; cursor = connection.cursor(); "
        "print([cursor.execute(f'SHOW {name}').fetchone()[0] for name in "
        "('statement_timeout', 'idle_in_transaction_session_timeout', 'lock_timeout')])"
    )
    result = _manage(env, "shell", "-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "['30s', '1min', '10s']"


def test_a_runaway_statement_is_cancelled_and_zero_lifts_the_limit():
    slow = "from django.db import connection; connection.cursor().execute('SELECT pg_sleep(1)')"
    bounded = _manage(production_env(DB_STATEMENT_TIMEOUT_S="0.2"), "shell", "-c", slow)
    assert bounded.returncode != 0
    assert "canceling statement due to statement timeout" in bounded.stderr
    unbounded = _manage(production_env(DB_STATEMENT_TIMEOUT_S="0"), "shell", "-c", slow)
    assert unbounded.returncode == 0, unbounded.stderr


def test_a_negative_timeout_fails_at_startup():
    result = _manage({**os.environ, "DB_LOCK_TIMEOUT_S": "-1"}, "check")
    assert result.returncode != 0
    assert "must not be negative" in result.stderr


def test_an_asgi_process_pools_its_connections_and_keeps_the_timeouts():
    """DB_POOL (set for the ASGI web server): one pool per process, no connection kept per
    thread, and pooled sessions bounded like every other."""
    env = {k: v for k, v in production_env().items() if not k.startswith("DB_")} | {
        "DB_POOL": "true",
        "DB_POOL_MAX_SIZE": "3",
    }
    code = (
        "from django.conf import settings; from django.db import connection; "
        "db = settings.DATABASES['default']; "
        "cursor = connection.cursor(); "
        "print(db['CONN_MAX_AGE'], db['OPTIONS']['pool']['max_size'], "
        "connection.pool is not None, cursor.execute('SHOW lock_timeout').fetchone()[0])"
    )
    result = _manage(env, "shell", "-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "0 3 True 10s"
