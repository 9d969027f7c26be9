"""A short soak over the real adapters against the platform fakes (every fault of the fakes
at a low rate, worker processes SIGKILLed, first comments on): per platform, nothing lost
and nothing published twice, posts and comments, counted at the platform."""

import io

import pytest

from loadtest.platform_fakes import registry
from loadtest.soak import Soak, SoakConfig, resolve_platforms
from tests.processes import test_database_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_short_soak_over_the_platform_fakes_loses_and_duplicates_nothing():
    platforms = resolve_platforms("all")
    fakes = registry.available()
    if not fakes:
        pytest.skip("No platform fake exists yet (loadtest/platform_fakes/<platform>.py).")
    config = SoakConfig(
        publications=2 * len(fakes),
        destinations=2,
        workers=2,
        workspaces=2,
        threads=4,
        spread_s=2,
        kill_every_s=4,
        # A rate-limited call waits as long as the platform says (up to a minute).
        timeout_s=240,
        fault_rate=0.04,
        platforms=platforms,
        database_url=test_database_url(),
        # A second account per workspace that Reddit's spam filter removes from, and a
        # channel whose uploads YouTube locks private: published all the same, with a notice.
        account_behaviours=("reddit:spam_removed", "youtube:lock_private"),
        first_comments=True,
    )
    progress = io.StringIO()
    figures = Soak(config=config, progress=progress).run()

    # Every platform asked for is either soaked or reported as skipped, with the reason.
    assert set(figures["platforms"]) | set(figures["skipped"]) == set(platforms)
    assert set(figures["platforms"]) == set(fakes)
    assert all(figures["skipped"].values())
    for platform, outcome in figures["platforms"].items():
        assert outcome["renditions"] >= 1, platform
        assert outcome["duplicates"] == 0, (platform, outcome)
        assert outcome["lost"] == 0, (platform, outcome)
        assert outcome["unmatched_posts"] == 0, (platform, outcome)
        assert outcome["comment_duplicates"] == 0, (platform, outcome)
        assert outcome["comments_lost"] == 0, (platform, outcome)
    assert figures["platforms"]["reddit"]["account_behaviours"] == ["spam_removed"]
    assert set(figures["held_not_published"]) == set(fakes)
    assert figures["renditions"] == 2 * config.publications
    assert figures["duplicates"] == 0
    assert figures["lost"] == 0
    assert figures["worker_kills"] >= 1
    assert sum(sum(o["faults_struck"].values()) for o in figures["platforms"].values()) >= 1
    assert "publishing" in progress.getvalue()
