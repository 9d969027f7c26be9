"""Boolean settings read from the environment: a typo fails at startup, naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings import BOOL_FALSE, BOOL_TRUE, env_bool

ROOT = Path(__file__).resolve().parents[2]
NAME = "SOCIALPOST_TEST_FLAG"


@pytest.mark.parametrize("raw", [*BOOL_TRUE, "TRUE", "Yes", " on "])
def test_true_spellings_read_as_true(monkeypatch, raw):
    monkeypatch.setenv(NAME, raw)
    assert env_bool(NAME, default=False) is True


@pytest.mark.parametrize("raw", [*BOOL_FALSE, "FALSE", "No", " off "])
def test_false_spellings_read_as_false(monkeypatch, raw):
    monkeypatch.setenv(NAME, raw)
    assert env_bool(NAME, default=True) is False


@pytest.mark.parametrize("default", [True, False])
def test_unset_or_empty_takes_the_default(monkeypatch, default):
    monkeypatch.delenv(NAME, raising=False)
    assert env_bool(NAME, default=default) is default
    monkeypatch.setenv(NAME, "")
    assert env_bool(NAME, default=default) is default


@pytest.mark.parametrize("raw", ["flase", "yes please", "ture", "2", "enabled", "n"])
def test_a_typo_fails_naming_the_variable_and_the_accepted_values(monkeypatch, raw):
    monkeypatch.setenv(NAME, raw)
    with pytest.raises(ImproperlyConfigured) as failure:
        env_bool(NAME, default=False)
    message = str(failure.value)
    assert NAME in message
    assert repr(raw) in message
    for accepted in BOOL_TRUE + BOOL_FALSE:
        assert accepted in message


@pytest.mark.slow  # a child process
def test_startup_fails_on_a_mistyped_boolean():
    env = {**os.environ, "DEBUG": "flase"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "DEBUG must be a boolean" in result.stderr
