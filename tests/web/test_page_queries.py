"""What the busiest pages cost in SQL statements, pinned: the queue, the posting slots,
the series list and a series' page, a post's page and the calendar's week. Each is read
once to warm the session, then counted; more accounts, posts or series must not add a
statement (an N+1 shows up here), and the counts themselves are pinned so that a new
query on one of these pages is a decision, not an accident.

The common part of every workspace page (7 statements for an editor): the session, the
user, the workspace (with its organization), the user's role in it (read once a request:
the organization role, then the workspace membership), and, in the page's frame, the
workspaces to switch to and the organizations the user manages.
"""

from datetime import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.planning.services import queue_slots_replace, queued_publication_create
from tests.factories import SocialAccountFactory

pytestmark = pytest.mark.django_db

QUEUE = "/w/ws-a/queue/"
EVERY_DAY_AT_9 = [(day, time(9)) for day in range(7)]


def _count(client, url: str) -> tuple[int, str]:
    """The statements of one warm request of `url`, and its page."""
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured.captured_queries), response.content.decode()


def _queued_account(workspace, user, *, posts: int, own_slots: bool = False):
    account = SocialAccountFactory(workspace=workspace, platform="sandbox")
    if own_slots:
        queue_slots_replace(
            workspace=workspace, account=account, slots=EVERY_DAY_AT_9, timezone="UTC"
        )
    for i in range(posts):
        queued_publication_create(
            workspace=workspace,
            author=user,
            segments=[{"text": f"Queued {i} of @{account.handle}"}],
            destinations=[{"account": account.pk}],
        )
    return account


COMMON = 7
# The accounts, their schedules, their slots, their next posts (one UNION), those posts
# and their texts. (Before: 5 an account, and the role read again for each permission.)
QUEUE_QUERIES = COMMON + 6


def test_the_queue_costs_the_same_for_one_account_or_four(as_bob, bob, workspace_a):
    queue_slots_replace(workspace=workspace_a, slots=EVERY_DAY_AT_9, timezone="Europe/Warsaw")
    _queued_account(workspace_a, bob, posts=2)
    one, _ = _count(as_bob, QUEUE)
    for i in range(3):
        _queued_account(workspace_a, bob, posts=3, own_slots=i == 0)
    four, page = _count(as_bob, QUEUE)
    assert page.count('class="queue-item') == 2 + 3 * 3
    assert (one, four) == (QUEUE_QUERIES, QUEUE_QUERIES)
