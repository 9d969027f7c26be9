"""The one read of a publication (apps.publishing.selectors.publication_read) behind every
door: the token API, the MCP tools and the web app's pages cost a fixed number of queries
whatever the number of publications listed, destinations, parts, media and attempts."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.db import connection
from django.db.models import F
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.api.mcp import tools
from apps.publications.models import Publication
from apps.publishing.selectors import (
    publication_detail,
    publication_page,
    with_publication_read,
)
from apps.publishing.services import publication_create
from apps.renditions.models import DeliveryAttempt
from tests.factories import MediaAssetFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db

DESTINATIONS = 3


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture(autouse=True)
def _keep_the_test_transaction(monkeypatch):
    # Tools close stale connections as Django's request signals do; in a test transaction
    # that would close the test's own connection.
    monkeypatch.setattr(tools, "close_old_connections", lambda: None)


@pytest.fixture
def accounts(workspace_a):
    return [
        SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle=f"read{i}")
        for i in range(DESTINATIONS)
    ]


@pytest.fixture
def media(workspace_a):
    return MediaAssetFactory(workspace=workspace_a)


@pytest.fixture
def web(alice, workspace_a):
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def mcp_ctx(workspace_a, make_token):
    """What the SDK hands a tool: the request, whose state carries the accepted token."""
    state = SimpleNamespace(api_token=make_token(workspace_a).token)
    return SimpleNamespace(request_context=SimpleNamespace(request=SimpleNamespace(state=state)))


def _posts(workspace, accounts, media, n: int, *, hours: int = 2) -> list[Publication]:
    """n scheduled posts of two parts with media, each to every account, each destination
    with a failed attempt on record."""
    made = []
    for i in range(n):
        publication = publication_create(
            workspace=workspace,
            author=None,
            segments=[
                {"text": f"Post {i}", "media": [{"id": media.pk, "alt_text": "A square"}]},
                {"text": "Second part", "media": [{"id": media.pk}]},
            ],
            destinations=[{"account": account.pk} for account in accounts],
            scheduled_at=timezone.now() + timedelta(hours=hours, minutes=i),
            status="scheduled",
        )
        for rendition in publication.renditions.all():
            DeliveryAttempt.objects.create(
                rendition=rendition,
                workspace=workspace,
                kind="publish",
                outcome="failed",
                segment_position=0,
                error={"kind": "provider_unavailable", "message": "503"},
            )
        made.append(publication)
    return made


def _count(call) -> int:
    with CaptureQueriesContext(connection) as captured:
        call()
    return len(captured)


def _doors(api, web, ctx):
    """Each door's list and its detail read of `pk`, each checked to answer."""

    def api_list():
        response = api.get("/api/v1/publications")
        assert response.status_code == 200, response.content
        return [p["id"] for p in response.json()["results"]]

    def mcp_list():
        result = tools.list_publications(ctx)
        assert not result.is_error, result
        return [p["id"] for p in result.structured_content["publications"]]

    def web_list():
        response = web.get("/w/ws-a/posts/")
        assert response.status_code == 200
        return [p.pk for p in response.context["page"].posts]

    def api_detail(pk):
        response = api.get(f"/api/v1/publications/{pk}")
        assert response.status_code == 200, response.content
        return response.json()

    def mcp_detail(pk):
        result = tools.get_publication(ctx, publication_id=pk)
        assert not result.is_error, result
        return result.structured_content

    def web_detail(pk):
        response = web.get(f"/w/ws-a/posts/{pk}/")
        assert response.status_code == 200
        return response

    return {
        "list": {"api": api_list, "mcp": mcp_list, "web": web_list},
        "detail": {"api": api_detail, "mcp": mcp_detail, "web": web_detail},
    }


@pytest.mark.parametrize("door", ["api", "mcp", "web"])
def test_a_page_of_twenty_costs_what_a_page_of_one_does(
    door, workspace_a, accounts, media, api_a, web, mcp_ctx
):
    read = _doors(api_a, web, mcp_ctx)["list"][door]
    _posts(workspace_a, accounts, media, 1)
    assert len(read()) == 1  # and the token's, the session's first-use writes are done
    one = _count(read)

    _posts(workspace_a, accounts, media, 19, hours=3)
    assert len(read()) == 20
    twenty = _count(read)

    assert twenty == one


@pytest.mark.parametrize("door", ["api", "mcp", "web"])
def test_a_post_with_three_destinations_costs_what_one_with_one_does(
    door, workspace_a, accounts, media, api_a, web, mcp_ctx
):
    read = _doors(api_a, web, mcp_ctx)["detail"][door]
    (single,) = _posts(workspace_a, accounts[:1], media, 1)
    (triple,) = _posts(workspace_a, accounts, media, 1)
    read(single.pk)

    one = _count(lambda: read(single.pk))
    three = _count(lambda: read(triple.pk))

    assert three == one


def test_the_api_and_mcp_show_the_same_publication(workspace_a, accounts, media, api_a, mcp_ctx):
    (publication,) = _posts(workspace_a, accounts, media, 1)
    doors = _doors(api_a, None, mcp_ctx)["detail"]

    assert doors["mcp"](publication.pk) == doors["api"](publication.pk)


def test_the_post_page_costs_a_fixed_number_of_queries(workspace_a, accounts, media, web):
    """The session and its person, the workspace and the role, the publication with all
    it shows (its review too), the destinations' pending publish jobs, and the page's
    own reads (the approval rule, the navigation): none per destination."""
    (publication,) = _posts(workspace_a, accounts, media, 1)
    read = _doors(None, web, None)["detail"]["web"]
    read(publication.pk)

    with CaptureQueriesContext(connection) as captured:
        response = read(publication.pk)

    assert len(response.context["cards"]) == DESTINATIONS
    assert all(len(card.attempts) == 1 for card in response.context["cards"])

    def reading(table):
        return [q["sql"] for q in captured.captured_queries if f'"{table}"' in q["sql"]]

    assert len(reading("jobs_job")) == 1  # every destination's due time, through publishing
    # The one read holds the rest: no other query reads these.
    for table in (
        "renditions_rendition",
        "renditions_renditionsegment",
        "renditions_deliveryattempt",
        "renditions_firstcomment",
        "publications_segmentmedia",
        "approvals_review",
        "approvals_reviewcomment",
    ):
        assert len(reading(table)) == 1, table


def test_the_read_holds_everything_it_shows(
    workspace_a, accounts, media, django_assert_num_queries
):
    (made,) = _posts(workspace_a, accounts, media, 1)

    with django_assert_num_queries(1):
        publication = publication_detail(workspace_id=workspace_a.pk, pk=made.pk, for_page=True)
    assert publication is not None
    with django_assert_num_queries(0):
        assert [s.text for s in publication.segments.all()] == ["Post 0", "Second part"]
        assert [link.media.kind for link in publication.segments.all()[0].media_links.all()] == [
            "image"
        ]
        for rendition in publication.renditions.all():
            assert rendition.social_account.handle.startswith("read")
            assert rendition.effective_scheduled_at == made.scheduled_at
            assert len(rendition.delivery_attempts.all()) == 1
            assert [len(s.media.all()) for s in rendition.segments.all()] == [1, 1]
            assert getattr(rendition, "first_comment", None) is None
        assert publication.author is None
        assert getattr(publication, "review", None) is None
        assert list(publication.review_comments.all()) == []


def test_a_page_keeps_the_order_asked_and_only_the_workspaces(
    workspace_a, workspace_b, accounts, media, django_assert_num_queries
):
    mine = _posts(workspace_a, accounts, media, 3)
    other = SocialAccountFactory(workspace=workspace_b, platform="sandbox", handle="other")
    (theirs,) = _posts(workspace_b, [other], MediaAssetFactory(workspace=workspace_b), 1)
    wanted = [mine[2].pk, theirs.pk, mine[0].pk]

    with django_assert_num_queries(1):
        page = publication_page(Publication.objects.for_workspace(workspace_a), wanted)

    assert [p.pk for p in page] == [mine[2].pk, mine[0].pk]
    assert publication_detail(workspace_id=workspace_a.pk, pk=theirs.pk) is None


def test_a_listed_read_keeps_the_querysets_order_slice_and_filters(
    workspace_a, accounts, media, django_assert_num_queries
):
    made = _posts(workspace_a, accounts, media, 4)
    mine = Publication.objects.for_workspace(workspace_a)

    with django_assert_num_queries(1):
        listed = list(with_publication_read(mine.order_by("-scheduled_at"))[1:3])
    assert [p.pk for p in listed] == [made[2].pk, made[1].pk]
    assert [len(p.renditions.all()) for p in listed] == [len(accounts)] * 2
    assert with_publication_read(mine).get(pk=made[0].pk).segments.all()[0].text == "Post 0"
    assert list(with_publication_read(mine.filter(pk__in=[]))) == []
    # A queryset selecting more than the id reads the ids first, then their values.
    annotated = mine.annotate(later=F("scheduled_at")).order_by("-later")
    with django_assert_num_queries(2):
        assert [p.pk for p in with_publication_read(annotated)] == [p.pk for p in made[::-1]]
    distinct = mine.filter(renditions__isnull=False).distinct().order_by("scheduled_at")
    assert [p.pk for p in with_publication_read(distinct)] == [p.pk for p in made]


def test_a_destination_card_costs_the_same_for_any_number_of_destinations(
    workspace_a, accounts, media, web
):
    """The card a destination's polling fetches reads its publication by the one read."""
    (single,) = _posts(workspace_a, accounts[:1], media, 1)
    (triple,) = _posts(workspace_a, accounts, media, 1)

    def card(publication):
        rendition = publication.renditions.all()[0]
        response = web.get(f"/w/ws-a/posts/{publication.pk}/destinations/{rendition.pk}/")
        assert response.status_code == 200
        assert response.context["card"].rendition.pk == rendition.pk
        assert len(response.context["card"].attempts) == 1

    card(single)
    assert _count(lambda: card(triple)) == _count(lambda: card(single))


def test_a_destination_card_is_found_only_under_its_own_post(
    workspace_a, workspace_b, accounts, media, web
):
    first, second = _posts(workspace_a, accounts[:1], media, 2)
    other = SocialAccountFactory(workspace=workspace_b, platform="sandbox", handle="other")
    (theirs,) = _posts(workspace_b, [other], MediaAssetFactory(workspace=workspace_b), 1)
    mine = first.renditions.all()[0]
    foreign = theirs.renditions.all()[0]

    assert web.get(f"/w/ws-a/posts/{first.pk}/destinations/{mine.pk}/").status_code == 200
    assert web.get(f"/w/ws-a/posts/{second.pk}/destinations/{mine.pk}/").status_code == 404
    assert web.get(f"/w/ws-a/posts/{theirs.pk}/destinations/{foreign.pk}/").status_code == 404
