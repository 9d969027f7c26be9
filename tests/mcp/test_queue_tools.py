"""The queue's tools and resolve_rendition, called in-process: the rules of the API
endpoints they mirror (scopes, another workspace's ids, the services' refusals)."""

from datetime import time, timedelta

import pytest
from django.utils import timezone

from apps.api.mcp import tools
from apps.planning.services import queue_slots_replace
from apps.publishing.services import publication_create
from tests.factories import SocialAccountFactory
from tests.mcp.test_tools import _keep_the_test_transaction, code, context  # noqa: F401
from tests.web.test_publications import fail

pytestmark = pytest.mark.django_db


@pytest.fixture
def ctx(workspace_a, make_token):
    return context(make_token(workspace_a).token)


@pytest.fixture
def account(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="queued")


def _draft(workspace, account, **scheduled):
    return publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": "Queued"}],
        destinations=[{"account": account.pk}],
        **scheduled,
    )


def _scheduled(workspace, account):
    return _draft(
        workspace, account, status="scheduled", scheduled_at=timezone.now() + timedelta(hours=1)
    )


def test_slots_are_set_listed_and_followed_again(ctx, account):
    result = tools.set_queue_slots(
        ctx, slots=[{"weekday": "mon", "time": "09:30"}], timezone="Europe/Warsaw"
    )
    assert not result.is_error, result
    assert result.structured_content["slots"] == [{"weekday": "mon", "time": "09:30"}]
    follows = tools.list_queue_slots(ctx, account_id=account.pk).structured_content
    assert (follows["source"], follows["timezone"]) == ("workspace", "Europe/Warsaw")

    own = tools.set_queue_slots(ctx, account_id=account.pk, slots=[])
    assert own.structured_content["source"] == "account"
    assert own.structured_content["slots"] == []
    back = tools.set_queue_slots(ctx, account_id=account.pk, follow_workspace=True)
    assert back.structured_content["source"] == "workspace"


def test_bad_slots_and_foreign_accounts_are_refused_in_the_envelope(ctx, workspace_b):
    assert code(tools.set_queue_slots(ctx, slots=[{"weekday": "someday", "time": "9"}])) == (
        "VALIDATION_ERROR"
    )
    assert code(tools.set_queue_slots(ctx, slots=[], timezone="Mars/Base")) == "INVALID_TIMEZONE"
    theirs = SocialAccountFactory(workspace=workspace_b)
    assert code(tools.list_queue_slots(ctx, account_id=theirs.pk)) == "NOT_FOUND"
    assert code(tools.set_queue_slots(ctx, account_id=theirs.pk, slots=[])) == "NOT_FOUND"
    assert code(tools.set_queue_slots(ctx, follow_workspace=True)) == "VALIDATION_ERROR"


def test_queue_publication_takes_the_next_free_slot(ctx, workspace_a, account):
    queue_slots_replace(
        workspace=workspace_a, slots=[(day, time(9)) for day in range(7)], timezone="UTC"
    )
    draft = _draft(workspace_a, account)
    result = tools.queue_publication(ctx, publication_id=draft.pk, revision=draft.revision)
    assert not result.is_error, result
    assert result.structured_content["status"] == "scheduled"
    assert result.structured_content["scheduled_at"].endswith("09:00:00Z")
    stale = tools.queue_publication(ctx, publication_id=draft.pk, revision=draft.revision)
    assert code(stale) == "REVISION_CONFLICT"


def test_queueing_needs_write_and_publish(workspace_a, make_token, account):
    draft = _draft(workspace_a, account)
    writer = context(make_token(workspace_a, scopes=["read", "write", "mcp"]).token)
    refused = tools.queue_publication(writer, publication_id=draft.pk, revision=draft.revision)
    assert code(refused) == "INSUFFICIENT_SCOPE"
    reader = context(make_token(workspace_a, scopes=["read", "mcp"]).token)
    assert code(tools.set_queue_slots(reader, slots=[])) == "INSUFFICIENT_SCOPE"
    assert not tools.list_queue_slots(reader).is_error


def test_resolve_settles_an_ambiguous_destination_once(ctx, workspace_a, account, workspace_b):
    rendition = _scheduled(workspace_a, account).renditions.get()
    fail(rendition, kind="outcome_unknown", action="verify", ambiguous=True)

    retried = tools.resolve_rendition(ctx, rendition_id=rendition.pk, outcome="retry")
    assert not retried.is_error, retried
    again = tools.resolve_rendition(ctx, rendition_id=rendition.pk, outcome="failed")
    assert code(again) == "NOT_AMBIGUOUS"
    bad = tools.resolve_rendition(ctx, rendition_id=rendition.pk, outcome="published")
    assert code(bad) in ("NOT_AMBIGUOUS", "VALIDATION_ERROR")

    theirs = _scheduled(workspace_b, SocialAccountFactory(workspace=workspace_b)).renditions.get()
    assert code(tools.resolve_rendition(ctx, rendition_id=theirs.pk, outcome="retry")) == (
        "NOT_FOUND"
    )
