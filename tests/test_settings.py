import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PRODUCTION_ENV = {
    "DEBUG": "false",
    "SECRET_KEY": "x" * 20 + "a-long-random-production-secret-value-0123456789",
    "ENCRYPTION_KEYS": "k1:" + "A" * 43,
    "ALLOWED_HOSTS": "post.example.com",
    "SECURE_SSL_REDIRECT": "true",
    "SESSION_COOKIE_SECURE": "true",
    "CSRF_COOKIE_SECURE": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
}


def test_check_deploy_is_clean_with_production_values():
    env = {**os.environ, **PRODUCTION_ENV}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_a_non_postgres_database_url_fails_fast():
    env = {**os.environ, "DATABASE_URL": "sqlite:///db.sqlite3"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "must point at PostgreSQL" in result.stderr
