"""delete_post against the platform fakes: Threads, Facebook, YouTube and Reddit delete the
account's own post (a second delete finds it gone and still succeeds), another account's
post is not theirs to delete; Instagram and TikTok say their platform has no delete."""

from __future__ import annotations

import contextlib
import time

import httpx
import pytest

from apps.providers.base import PublishedSegment, SupportsDelete, get_adapter
from apps.providers.errors import ProviderError
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.base import StoredPost
from loadtest.platform_fakes.facebook import FacebookFake
from loadtest.platform_fakes.instagram import InstagramFake
from loadtest.platform_fakes.reddit import RedditFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.threads import ThreadsFake
from loadtest.platform_fakes.youtube import YouTubeFake
from tests.providers.social_helpers import make_account, make_ctx

pytestmark = pytest.mark.django_db


def _post(fake, account: dict, post_id: str) -> StoredPost:
    extra = {"title": "A loaf", "privacy": "public", "subreddit": "Breadit", "kind": "self"}
    extra |= {"url": "", "author": account["handle"]}
    return fake.store(StoredPost(id=post_id, account=account["remote_id"], text="hi", extra=extra))


CASES = {
    # platform: (fake class, the post's id on that platform)
    "threads": (ThreadsFake, "178414"),
    "facebook": (FacebookFake, None),  # {page}_{post}
    "youtube": (YouTubeFake, "dQw4w9WgXcQ"),
    "reddit": (RedditFake, "t3_1abc"),
}


@pytest.fixture
def served(settings):
    servers = []

    def serve(fake):
        server = FakeServer([fake]).start()
        servers.append(server)
        settings.PROVIDER_API_REDIRECT = server.base_url
        settings.PROVIDER_TIMEOUT_S = 2.0
        return fake

    yield serve
    for server in servers:
        server.stop()


@pytest.mark.parametrize("platform", sorted(CASES))
def test_the_adapter_deletes_its_own_post_and_a_post_already_gone_counts_as_deleted(
    platform, workspace_a, served
):
    fake_class, post_id = CASES[platform]
    fake = served(fake_class(FaultPlan.calm()))
    opened = fake.new_account("operator")
    post_id = post_id or f"{opened['remote_id']}_{int(time.time())}"
    _post(fake, opened, post_id)
    opened.pop("display_name", None)
    ctx = make_ctx(make_account(workspace_a, platform, **opened))
    adapter = get_adapter(platform)
    assert isinstance(adapter, SupportsDelete)

    adapter.delete_post(ctx, PublishedSegment(provider_post_id=post_id))
    adapter.delete_post(ctx, PublishedSegment(provider_post_id=post_id))  # gone already

    assert fake.published() == [] and list(fake.deleted) == [post_id]
    assert [c for c in fake.calls if c[0] in ("DELETE", "POST")]  # it went to the platform


@pytest.mark.parametrize("platform", ["threads", "facebook", "youtube", "reddit"])
def test_another_accounts_post_stays(platform, workspace_a, served):
    fake_class, post_id = CASES[platform]
    fake = served(fake_class(FaultPlan.calm()))
    mine, theirs = fake.new_account("operator"), fake.new_account("someone")
    post_id = post_id or f"{theirs['remote_id']}_{int(time.time())}"
    _post(fake, theirs, post_id)
    mine.pop("display_name", None)
    ctx = make_ctx(make_account(workspace_a, platform, **mine))

    with contextlib.suppress(ProviderError):  # Reddit refuses it outright (403)
        get_adapter(platform).delete_post(ctx, PublishedSegment(provider_post_id=post_id))

    assert [p.id for p in fake.published()] == [post_id] and not fake.deleted


def test_a_reddit_media_post_not_yet_named_cannot_be_deleted(workspace_a, served):
    fake = served(RedditFake(FaultPlan.calm()))
    opened = fake.new_account("operator")
    opened.pop("display_name", None)
    ctx = make_ctx(make_account(workspace_a, "reddit", **opened))

    with pytest.raises(ProviderError) as caught:
        get_adapter("reddit").delete_post(ctx, PublishedSegment("pending:Breadit", pending=True))

    assert caught.value.code == "post_unidentified"
    assert not [c for c in fake.calls if c[1] == "/api/del"]


@pytest.mark.parametrize("platform", ["instagram", "tiktok"])
def test_a_platform_without_a_delete_says_so(platform):
    adapter = get_adapter(platform)

    assert not isinstance(adapter, SupportsDelete)
    assert adapter.delete_unsupported.endswith(" app")


def test_the_instagram_fake_refuses_a_delete_as_graph_does_and_keeps_the_media(served, settings):
    fake = served(InstagramFake(FaultPlan.calm()))
    opened = fake.new_account("operator")
    _post(fake, opened, "17900001")

    response = httpx.delete(
        f"{settings.PROVIDER_API_REDIRECT}/graph.instagram.com/v23.0/17900001",
        headers={"Authorization": f"Bearer {opened['credentials']['access_token']}"},
    )

    assert response.status_code == 400
    assert response.json()["error"]["error_subcode"] == 33
    assert [p.id for p in fake.published()] == ["17900001"]
