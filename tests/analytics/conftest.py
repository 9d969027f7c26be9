"""Fixtures of the analytics tests: a sandbox account whose platform answers are faked at
the edge (respx), and a published rendition with its metrics schedule."""

from datetime import timedelta

import pytest
import respx
from django.db import transaction

from apps.analytics.models import MetricsSchedule
from apps.common import events
from apps.common.db_clock import db_now
from apps.renditions.models import Rendition
from apps.sandbox.services import sandbox_account_create
from tests.factories import RenditionFactory

SANDBOX = "https://sandbox.test/sandbox/api/v1"


@pytest.fixture
def sandbox_api(settings):
    settings.SANDBOX_BASE_URL = "https://sandbox.test"
    with respx.mock(assert_all_called=False) as mock:
        yield mock


@pytest.fixture
def account(workspace_a, sandbox_api):
    return sandbox_account_create(workspace=workspace_a, handle="metrics")


def publish(account, *, post_id: str = "7", age: timedelta = timedelta(hours=2)) -> Rendition:
    """A rendition that went live `age` ago, announced as the pipeline announces it."""
    rendition = RenditionFactory(
        publication__workspace=account.workspace,
        social_account=account,
        status=Rendition.Status.PUBLISHED,
        provider_post_id=post_id,
        provider_url=f"https://sandbox.test/p/{post_id}",
        published_at=db_now() - age,
    )
    with transaction.atomic():
        events.emit(events.RENDITION_PUBLISHED, rendition=rendition)
    return rendition


def make_due(rendition: Rendition) -> None:
    MetricsSchedule.objects.filter(pk=rendition.pk).update(
        next_sync_at=db_now() - timedelta(seconds=1)
    )
