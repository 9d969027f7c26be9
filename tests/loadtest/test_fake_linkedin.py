"""The real LinkedIn adapter against the LinkedIn fake, served over HTTP."""

from __future__ import annotations

import random
from datetime import UTC, datetime, time, timedelta

import pytest

from apps.accounts import services as account_services
from apps.providers.base import PublishContext, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.linkedin.adapter import UNIDENTIFIED
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.linkedin import FAKE, MEMBER_SCOPES, LinkedInFake
from loadtest.platform_fakes.server import FakeServer
from tests.providers.social_helpers import image, make_account

pytestmark = pytest.mark.django_db

ORG = "urn:li:organization:2414183"
ORG_SCOPES = MEMBER_SCOPES | {"w_organization_social", "r_organization_social"}


@pytest.fixture
def fake():
    return LinkedInFake(FaultPlan(hang_s=1.0))


@pytest.fixture
def server(fake, settings):
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.5
    settings.LINKEDIN_CLIENT_ID = "li-client"
    settings.LINKEDIN_CLIENT_SECRET = "li-secret"
    settings.LINKEDIN_API_VERSION = "202609"
    yield server
    server.stop()


def _open(workspace, fake, *, scopes=MEMBER_SCOPES):
    opened = fake.new_account("Alice Example", scopes=scopes)
    account = make_account(workspace, "linkedin", **opened)
    account.token_expires_at = datetime.fromisoformat(opened["credentials"]["expires_at"])
    return account


@pytest.fixture
def account(workspace_a, fake, server):
    return _open(workspace_a, fake)


@pytest.fixture
def org_account(workspace_a, fake, server):
    account = _open(workspace_a, fake, scopes=ORG_SCOPES)
    fake.admins[account.remote_id] = {ORG}
    return account


def _ctx(account, settings=None) -> PublishContext:
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings=settings or {"visibility": "PUBLIC"},
        rendition_id=41,
        idempotency_base="rendition-41",
    )


def _publish(ctx, text: str, media=()):
    return get_adapter("linkedin").publish_segment(
        ctx, SegmentPayload(0, text, list(media)), reply_to=None
    )


def test_the_module_names_its_fake_and_sample_content_carries_the_marker():
    assert FAKE is LinkedInFake
    content = LinkedInFake().sample_content(random.Random(3), "L-17")
    assert "L-17" in content["segments"][0]["text"]


def test_a_text_post_is_created_with_the_versioned_headers(fake, account):
    published = _publish(_ctx(account), "Hello from the fake")

    [post] = fake.published()
    assert published.provider_post_id == post.id
    assert published.provider_url == f"https://www.linkedin.com/feed/update/{post.id}"
    assert post.account == f"urn:li:person:{account.remote_id}"
    assert post.text == "Hello from the fake"


def test_a_retired_api_version_is_refused_and_nothing_is_posted(fake, account, settings):
    settings.LINKEDIN_API_VERSION = "202409"

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "too old")

    assert caught.value.http_status == 426 and caught.value.code == "NONEXISTENT_VERSION"
    assert fake.published() == []


def test_an_image_is_initialized_put_and_attached_though_its_status_is_unreadable(fake, account):
    _publish(_ctx(account), "a picture", media=[image(alt="A red square", data=b"png" * 10)])

    [post] = fake.published()
    [urn] = post.media
    assert fake.images[urn]["size"] == 30
    assert post.extra["post"]["content"] == {"media": {"id": urn, "altText": "A red square"}}
    # A member token cannot read the image's status: the adapter asked once and went on.
    assert fake.calls.count(("GET", f"/rest/images/{urn.replace(':', '%3A')}")) == 1


def test_a_201_without_x_restli_id_takes_the_urn_from_location(fake, account):
    fake.restli_id_missing = 1.0

    published = _publish(_ctx(account), "no header")

    [post] = fake.published()
    assert published.provider_post_id == post.id


def test_a_201_naming_nothing_is_found_among_the_organizations_posts(fake, org_account):
    fake.restli_id_missing, fake.send_location = 1.0, False

    published = _publish(_ctx(org_account, {"author": ORG}), "a page update")

    [post] = fake.published()
    assert post.account == ORG
    assert published.provider_post_id == post.id


def test_a_201_naming_nothing_that_cannot_be_looked_up_is_recorded_not_failed(fake, account):
    fake.restli_id_missing, fake.send_location = 1.0, False

    published = _publish(_ctx(account), "a member update")

    assert len(fake.published()) == 1
    assert published.provider_post_id == f"{UNIDENTIFIED}rendition-41-s0"
    assert published.published_at is not None


def test_a_timeout_after_accept_is_unknown_and_a_resend_names_the_existing_post(
    fake, workspace_a, server
):
    # The account may read its posts (r_member_social): the named post is confirmed.
    account = _open(workspace_a, fake, scopes=MEMBER_SCOPES | {"r_member_social"})
    ctx = _ctx(account)
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError) as caught:
        _publish(ctx, "once only")
    assert caught.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert get_adapter("linkedin").is_retry_safe(account) is False  # never resent blindly
    [stored] = fake.published()

    fake.faults.rates.clear()
    with pytest.raises(ProviderError) as again:  # a person's retry
        _publish(ctx, "once only")

    # The pipeline settles the unknown attempt as this post (DUPLICATE_POST names it).
    assert again.value.kind == ErrorKind.DUPLICATE_CONTENT
    assert again.value.existing_post_id == stored.id
    assert len(fake.published()) == 1


def test_a_429_without_headers_waits_for_the_next_utc_day(fake, account):
    fake.faults.rates["rate_limit"] = 1.0

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "too many today")

    err = caught.value
    assert err.kind == ErrorKind.RATE_LIMITED and err.http_status == 429
    tomorrow = datetime.now(UTC).date() + timedelta(days=1)
    assert err.retry_at == datetime.combine(tomorrow, time.min, tzinfo=UTC)
    assert fake.published() == []


def test_a_token_near_expiry_is_refreshed_and_the_new_one_posts(fake, account):
    credentials = account_services.social_account_credentials(account)
    credentials["expires_at"] = (datetime.now(UTC) + timedelta(days=2)).isoformat()

    fresh = get_adapter("linkedin").refresh_credentials(account, credentials)

    assert fresh["access_token"] != credentials["access_token"]
    assert fresh["refresh_token"] == credentials["refresh_token"]
    account_services.social_account_store_credentials(account=account, credentials=fresh)
    _publish(_ctx(account), "with the new token")
    assert len(fake.published()) == 1


def test_posts_name_an_author_the_fake_knows_as_an_account(fake, account):
    _publish(_ctx(account), "whose post is this")

    [post] = fake.published()
    assert fake.accounts[post.account]["id"] == account.remote_id


def _video(data: bytes, media_id: int = 9):
    return image(media_id=media_id, alt="", data=data, kind="video", mime="video/mp4")


def test_a_video_is_uploaded_in_parts_finalized_and_posted(fake, account):
    fake.video_part_bytes = 10
    ctx = _ctx(account)

    _publish(ctx, "a clip", media=[_video(b"0123456789" * 2 + b"tail")])

    [post] = fake.published()
    [urn] = post.media
    assert urn.startswith("urn:li:video:")
    assert post.extra["post"]["content"] == {"media": {"id": urn}}
    video = fake.videos[urn]
    assert video["status"] == "AVAILABLE"
    assert [size for size, _ in video["parts"].values()] == [10, 10, 4]
    assert ctx.checkpoint["linkedin_videos"] == {"9": urn}


def test_a_video_still_processing_is_waited_for_and_not_uploaded_again(
    fake, org_account, monkeypatch
):
    waits = []
    monkeypatch.setattr("apps.providers.httpcall.sleep", waits.append)
    # An organization token may read the video's status, so the adapter waits for it.
    fake.faults.rates["slow_processing"] = 1.0
    fake.faults.processing_s = 60.0
    ctx = _ctx(org_account, {"author": ORG})

    with pytest.raises(ProviderError) as caught:
        _publish(ctx, "page clip", media=[_video(b"v" * 50)])

    assert caught.value.kind == ErrorKind.MEDIA_PROCESSING and caught.value.retryable
    assert fake.published() == [] and len(waits) == 4  # five status reads, then it gave up
    [urn] = fake.videos
    assert ctx.checkpoint["linkedin_videos"] == {"9": urn}

    fake.videos[urn]["status"] = "AVAILABLE"  # LinkedIn finished processing
    _publish(ctx, "page clip", media=[_video(b"v" * 50)])

    assert len(fake.videos) == 1  # the retry reused the finalized upload
    [post] = fake.published()
    assert post.media == [urn]


def test_a_video_with_an_image_is_refused_before_anything_is_sent(fake, account):
    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "both", media=[image(), _video(b"v" * 20)])

    assert caught.value.kind == ErrorKind.CONTENT_REJECTED
    assert fake.videos == {} and fake.images == {} and fake.published() == []


def test_an_organization_author_needs_the_organization_scope(fake, account):
    fake.admins[account.remote_id] = {ORG}

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account, {"author": ORG}), "as the page")

    assert caught.value.kind == ErrorKind.PERMISSION_MISSING
    assert fake.published() == []


# --- duplicate refusals as field reports describe them ---------------------------------------

READER_SCOPES = MEMBER_SCOPES | {"r_member_social"}


def test_the_duplicate_rule_lasts_its_window_then_the_same_text_is_a_new_post(fake, account):
    fake.duplicate_window_s = 3600
    start = fake.clock()
    _publish(_ctx(account), "daily special")

    fake.clock = lambda: start + 3000
    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "daily special")
    assert caught.value.kind == ErrorKind.DUPLICATE_CONTENT

    fake.clock = lambda: start + 3700  # the window has passed
    _publish(_ctx(account), "daily special")
    assert len(fake.published()) == 2


def test_two_image_only_posts_with_empty_text_are_two_posts_with_their_own_ids(fake, account):
    first = _publish(_ctx(account), "", media=[image(media_id=1, data=b"first")])
    second = get_adapter("linkedin").publish_segment(
        PublishContext(
            account=account,
            credentials=account_services.social_account_credentials(account),
            settings={"visibility": "PUBLIC"},
            rendition_id=42,
            idempotency_base="rendition-42",
        ),
        SegmentPayload(0, "", [image(media_id=2, data=b"second")]),
        reply_to=None,
    )

    posts = fake.published()
    assert len(posts) == 2
    assert {first.provider_post_id, second.provider_post_id} == {p.id for p in posts}


def test_a_resend_of_an_image_post_after_a_lost_answer_reuses_its_images(fake, workspace_a, server):
    fake.duplicate_compares_media = True  # a re-uploaded image would make a second post
    account = _open(workspace_a, fake, scopes=READER_SCOPES)
    ctx = _ctx(account)
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError) as caught:
        _publish(ctx, "our new loaf", media=[image(media_id=5, data=b"loaf")])
    assert caught.value.kind == ErrorKind.OUTCOME_UNKNOWN
    [stored] = fake.published()
    assert ctx.checkpoint["linkedin_images"] == {"5": stored.media[0]}

    fake.faults.rates.clear()
    with pytest.raises(ProviderError) as again:  # reconciliation's resend
        _publish(ctx, "our new loaf", media=[image(media_id=5, data=b"loaf")])

    assert len(fake.published()) == 1 and len(fake.images) == 1
    assert again.value.kind == ErrorKind.DUPLICATE_CONTENT
    assert again.value.existing_post_id == stored.id  # read back and confirmed as ours


def test_a_refusal_naming_a_post_that_answers_404_names_nothing(fake, workspace_a, server):
    fake.refusal_names_ghost = True
    account = _open(workspace_a, fake, scopes=READER_SCOPES)
    _publish(_ctx(account), "twice over")

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "twice over")

    err = caught.value
    assert err.kind == ErrorKind.DUPLICATE_CONTENT and err.existing_post_id is None
    assert err.code == "DUPLICATE_POST_UNCONFIRMED" and "does not exist" in err.message
    assert err.action == "verify"


def test_a_refusal_naming_a_post_this_token_may_not_read_names_nothing(fake, account):
    _publish(_ctx(account), "unreadable")  # a member token without r_member_social

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "unreadable")

    assert caught.value.existing_post_id is None
    assert "may not read" in caught.value.message
