"""A short soak: a few publications to misbehaving sandbox accounts while worker processes
are SIGKILLed, then replies from the inbox under some of them; nothing lost, nothing
published or replied twice."""

import io
import json

import pytest

from loadtest.soak import Soak, SoakConfig
from tests.processes import test_database_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_short_soak_loses_nothing_and_duplicates_nothing():
    config = SoakConfig(
        publications=14,
        destinations=3,
        workers=2,
        workspaces=2,
        threads=4,
        spread_s=2,
        kill_every_s=2,
        timeout_s=300,  # a bound, not a wait: the run ends once every post is settled
        database_url=test_database_url(),
        replies=6,  # then replies from the inbox, workers still killed
    )
    progress = io.StringIO()
    figures = Soak(config=config, progress=progress).run()

    shown = json.dumps(figures)  # the whole line, to read when an assertion fails
    assert figures["renditions"] == 42
    assert figures["lost"] == 0, shown
    assert figures["duplicates"] == 0, shown
    assert figures["worker_kills"] >= 1
    assert figures["published"] + figures["failed"] == 42
    # Expired tokens fail for good; a 5xx streak may outlast a rendition's retries; a call
    # lost on an expired account is checked once the account is reconnected.
    kinds = figures["failed_by_kind"]
    assert kinds.keys() <= {"auth_expired", "provider_unavailable", "outcome_unknown"}, shown
    assert kinds.get("outcome_unknown", 0) == figures["awaiting_reconnect"], shown
    assert figures["ambiguous_left"] == figures["awaiting_reconnect"], shown
    assert figures["failed_by_kind"]["auth_expired"] >= 1
    assert "publishing" in progress.getvalue()
    replies = figures["replies"]
    assert replies["replies"] >= 1, shown
    assert replies["reply_duplicates"] == 0, shown
    assert replies["replies_lost"] == 0, shown
    assert replies["replies_by_status"].get("pending", 0) == 0, shown
