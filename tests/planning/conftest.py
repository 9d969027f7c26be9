"""Fixtures of the queue tests: sandbox accounts of workspace A, slots, and a frozen clock."""

from contextlib import contextmanager
from datetime import datetime, time

import pytest
import time_machine

from apps.planning.services import queue_slots_replace
from tests.factories import SocialAccountFactory


@pytest.fixture
def news(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="news")


@pytest.fixture
def blog(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="blog")


@pytest.fixture
def set_slots(workspace_a):
    """set_slots([(weekday, "HH:MM"), ...], account=None, zone="Europe/Warsaw")."""

    def make(pairs, *, account=None, zone="Europe/Warsaw"):
        return queue_slots_replace(
            workspace=workspace_a,
            account=account,
            slots=[(day, time.fromisoformat(at)) for day, at in pairs],
            timezone=zone,
        )

    return make


@pytest.fixture
def clock():
    """`with clock(instant): ...` freezes the time there."""

    @contextmanager
    def at(instant: datetime):
        with time_machine.travel(instant, tick=False):
            yield

    return at
