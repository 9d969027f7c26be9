"""The soak's per-account switches of the fakes' behaviours: which exist, how an account
is opened with them on, and how a post the platform made something else of is counted."""

import pytest
from django.utils import timezone

from apps.renditions.models import Rendition
from loadtest.platform_fakes.reddit import RedditFake
from loadtest.platform_fakes.youtube import YouTubeFake
from loadtest.soak import published_with_notice, resolve_behaviours
from loadtest.soak_fakes import FakeFleet
from tests.factories import RenditionFactory


def test_all_switches_every_behaviour_the_chosen_platforms_fakes_offer():
    assert resolve_behaviours(["all"], ("x", "reddit", "youtube")) == (
        "reddit:media_fails",
        "reddit:spam_removed",
        "youtube:lock_private",
        "youtube:private_placeholder",
        "youtube:unlisted_hidden",
    )
    assert resolve_behaviours(["reddit:spam_removed"], ("reddit",)) == ("reddit:spam_removed",)
    assert resolve_behaviours([], ("reddit",)) == ()


def test_a_behaviour_no_chosen_fake_offers_is_refused_naming_those_there_are():
    with pytest.raises(ValueError, match="offer: youtube:lock_private"):
        resolve_behaviours(["reddit:spam_removed"], ("youtube",))
    with pytest.raises(ValueError, match="reddit:shadowban"):
        resolve_behaviours(["reddit:shadowban"], ("reddit",))


@pytest.mark.django_db
def test_an_account_opened_with_behaviours_has_them_switched_on_at_its_fake(workspace_a):
    fleet = FakeFleet(classes={}, seed=1, fault_rate=0.0, hang_s=1.0)
    fake = fleet.fakes["reddit"] = RedditFake()

    plain = fleet.account_create(workspace=workspace_a, platform="reddit", handle="plain")
    switched = fleet.account_create(
        workspace=workspace_a, platform="reddit", handle="odd", behaviours=("spam_removed",)
    )

    assert fake.switched(switched.remote_id, "spam_removed")
    assert not fake.switched(plain.remote_id, "spam_removed")


def test_the_youtube_switch_locks_one_channel_private():
    fake = YouTubeFake()
    fake.switch("UCa", "lock_private")

    assert fake._locks_private("UCa") and not fake._locks_private("UCb")


@pytest.mark.django_db
def test_published_with_a_notice_counts_only_published_renditions_carrying_one():
    notice = {"result": {"notices": [{"code": "removed", "message": "..."}]}}
    published = {"status": Rendition.Status.PUBLISHED, "published_at": timezone.now()}
    RenditionFactory(**published, checkpoint=notice)
    RenditionFactory(**published, checkpoint={"result": {"notices": []}})
    RenditionFactory(**published, checkpoint={})
    RenditionFactory(status=Rendition.Status.FAILED, checkpoint=notice)

    assert published_with_notice(Rendition.objects.all()) == 1
