"""Fixtures for series tests: a sandbox destination, a template, and a clock that stands
still where the test puts it."""

from contextlib import contextmanager
from datetime import datetime

import pytest
import time_machine

from tests.factories import SocialAccountFactory


@pytest.fixture
def account_a(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="weekly")


@pytest.fixture
def template(account_a):
    return {"segments": [{"text": "Weekly update"}], "destinations": [{"account": account_a.pk}]}


@pytest.fixture
def clock():
    """`with clock(instant): ...` freezes the time there (nested calls move it)."""

    @contextmanager
    def at(instant: datetime):
        with time_machine.travel(instant, tick=False):
            yield

    return at
