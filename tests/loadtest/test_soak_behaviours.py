"""The soak's per-account switches of the fakes' behaviours (which exist, how an account
is opened with them on, how a post the platform made something else of is counted) and
its first comments, counted at the platform."""

from collections import Counter

import pytest
from django.utils import timezone

from apps.renditions.models import Rendition
from loadtest.platform_fakes.base import StoredPost
from loadtest.platform_fakes.instagram import InstagramFake
from loadtest.platform_fakes.linkedin import LinkedInFake
from loadtest.platform_fakes.reddit import RedditFake
from loadtest.platform_fakes.threads import ThreadsFake
from loadtest.platform_fakes.x import LIMITS, XFake
from loadtest.platform_fakes.youtube import YouTubeFake
from loadtest.soak import comment_witness, published_with_notice, resolve_behaviours
from loadtest.soak_fakes import (
    FakeFleet,
    comment_marker,
    comment_marker_pattern,
    marker_for,
    marker_pattern,
)
from tests.factories import RenditionFactory


def test_all_switches_every_behaviour_the_chosen_platforms_fakes_offer():
    assert resolve_behaviours(["all"], ("x", "reddit", "youtube")) == (
        "x:enforce_limits",
        "reddit:media_fails",
        "reddit:spam_removed",
        "reddit:enforce_limits",
        "youtube:lock_private",
        "youtube:private_placeholder",
        "youtube:unlisted_hidden",
        "youtube:enforce_limits",
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


def test_a_comment_marker_is_never_counted_as_a_post():
    marker = marker_for("soak-ab12", 7)

    assert comment_marker(marker) == "soakab12c000007"
    assert marker_pattern("soak-ab12").findall(f"First comment {comment_marker(marker)}") == []
    assert comment_marker_pattern("soak-ab12").findall(comment_marker(marker)) == [
        comment_marker(marker)
    ]


def test_the_comment_witness_counts_duplicates_lost_and_comments_the_product_denies():
    marks = {1: (marker_for("t", 1), 1), 2: (marker_for("t", 2), 1), 3: (marker_for("t", 3), 1)}
    held = Counter(
        {(comment_marker(marks[1][0]), "acct"): 2, (comment_marker(marks[3][0]), "acct"): 1}
    )
    rows = [(1, "published", "acct"), (2, "published", "acct"), (3, "unknown", "acct")]

    figures = comment_witness(rows, held, marks)

    assert figures == {
        "comments": 3,
        "comments_by_status": {"published": 2, "unknown": 1},
        "comment_duplicates": 1,  # the first comment of 1 is there twice
        "comments_lost": 1,  # 2 is called published, the platform has none
        "comments_held_not_published": 1,  # 3 is unknown, the platform has it
    }


def test_comments_held_reads_replies_and_the_comments_a_fake_keeps_apart():
    pattern = comment_marker_pattern("t")
    fleet = FakeFleet(classes={}, seed=1, fault_rate=0.0, hang_s=1.0)
    fake = fleet.fakes["linkedin"] = LinkedInFake()
    fleet._aliases["linkedin"] = {"urn:li:person:9": "9"}
    fake.store(StoredPost(id="p1", account="urn:li:person:9", text="tn000001 post"))
    fake.store(StoredPost(id="r1", account="urn:li:person:9", text="tc000001", reply_to="p1"))
    fake.comments["p1"] = [{"actor": "urn:li:person:9", "message": {"text": "hi tc000002"}}]

    assert fleet.comments_held("linkedin", pattern) == Counter(
        {("tc000001", "9"): 1, ("tc000002", "9"): 1}
    )


def test_comments_held_reads_the_facebook_fakes_comments():
    from loadtest.platform_fakes.facebook import FacebookFake

    pattern = comment_marker_pattern("t")
    fleet = FakeFleet(classes={}, seed=1, fault_rate=0.0, hang_s=1.0)
    fake = fleet.fakes["facebook"] = FacebookFake()
    page = fake.new_account("Bakery")["remote_id"]
    fake.store(StoredPost(id=f"{page}_1", account=page, text="tn000001 post"))
    fake._comment(f"{page}_1", {"id": page, "name": "Bakery"}, "link tc000001")
    fake.add_comment(f"{page}_1", "Ann", "not ours")

    assert fleet.comments_held("facebook", pattern) == Counter({("tc000001", page): 1})


def test_comments_held_reads_the_instagram_fakes_comments():
    from loadtest.platform_fakes.instagram import InstagramFake

    pattern = comment_marker_pattern("t")
    fleet = FakeFleet(classes={}, seed=1, fault_rate=0.0, hang_s=1.0)
    fake = fleet.fakes["instagram"] = InstagramFake()
    account = fake.new_account("shop")["remote_id"]
    fake.store(StoredPost(id="1801", account=account, text="tn000001 post"))
    fake._comment("1801", {"id": account, "username": "shop"}, "link tc000001", None)
    fake.add_comment("1801", "ann", "not ours tc000002")

    assert fleet.comments_held("instagram", pattern)[("tc000001", account)] == 1
    assert fleet.comments_held("instagram", pattern)[("tc000002", account)] == 0


def test_the_linkedin_switches_change_one_authors_duplicate_rule():
    fake = LinkedInFake()
    for author in ("urn:li:person:1", "urn:li:person:2"):
        fake.store(StoredPost(id=f"p{author[-1]}", account=author, text="Rye", media=["img:a"]))
    fake.switch("urn:li:person:2", "duplicate_compares_media")

    with fake.lock:
        assert fake._duplicate_of("urn:li:person:1", "Rye", ["img:b"]) == "p1"
        assert fake._duplicate_of("urn:li:person:2", "Rye", ["img:b"]) is None  # other media
        assert fake._duplicate_of("urn:li:person:2", "Rye", ["img:a"]) == "p2"


def test_the_x_switch_enforces_the_allowance_for_one_user():
    fake = XFake()
    fake.switch("u2", "enforce_limits")
    endpoint = next(iter(LIMITS))
    for _ in range(LIMITS[endpoint]):
        for user in ("u1", "u2"):
            fake._count(user, endpoint)

    assert fake._count("u1", endpoint)[1] is False  # counted, not refused
    assert fake._count("u2", endpoint)[1] is True


def test_the_meta_switches_fail_or_expire_one_accounts_containers():
    fake = ThreadsFake()
    now = [1000.0]
    fake.clock = lambda: now[0]
    fake.switch("1", "containers_fail")
    fake.switch("2", "containers_expire")
    image = {"media_type": "IMAGE", "image_url": "https://media.example/a.jpg"}

    failing, expiring, calm = (fake.make_container(a, image) for a in ("1", "2", "3"))
    now[0] += 3600  # processed long since, well inside Meta's 24 h

    assert (failing.status(), expiring.status(), calm.status()) == ("ERROR", "EXPIRED", "FINISHED")
    assert InstagramFake.account_behaviours == ThreadsFake.account_behaviours
