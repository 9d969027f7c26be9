"""Who may open which page: another workspace's pages are 404 (never 403), a viewer reads
but cannot schedule or change anything, an editor cannot administer, anonymous visitors
are sent to log in, a suspended or deleted organization is read-only, and the organization
page is for its owners and admins."""

import pytest
from django.urls import resolve, reverse

from apps.accounts.models import Organization, OrganizationMembership, WorkspaceMembership
from apps.accounts.services import api_token_create
from apps.publications.models import Publication
from apps.renditions.models import Rendition
from tests.factories import (
    MediaAssetFactory,
    PublicationFactory,
    PublicationSegmentFactory,
    RenditionFactory,
    SocialAccountFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def objects(workspace_a, bob):
    """One of everything in workspace A, to aim at from outside."""
    account = SocialAccountFactory(workspace=workspace_a, handle="a-news")
    publication = PublicationFactory(workspace=workspace_a, status=Publication.Status.FAILED)
    PublicationSegmentFactory(publication=publication, text="in A")
    rendition = RenditionFactory(
        publication=publication,
        social_account=account,
        status=Rendition.Status.FAILED,
        last_error={"kind": "content_rejected", "message": "No.", "action": "edit"},
    )
    token = api_token_create(workspace=workspace_a, name="ci", scopes=["read"]).token
    media = MediaAssetFactory(workspace=workspace_a)
    return {
        "account": account.pk,
        "publication": publication.pk,
        "rendition": rendition.pk,
        "token": token.pk,
        "media": media.pk,
        "member": bob.pk,
    }


def workspace_urls(slug: str, o: dict) -> list[tuple[str, str]]:
    """(method, url) for every workspace page and action."""
    pk, rid = o["publication"], o["rendition"]

    def url(name: str, **kwargs) -> str:
        return reverse(name, kwargs={"workspace_slug": slug, **kwargs})

    return [
        ("get", url("workspace-home")),
        ("get", url("workspace-accounts")),
        ("get", url("analytics")),
        ("get", url("publication-metrics", pk=pk)),
        ("post", url("sandbox-connect")),
        ("post", url("account-disconnect", pk=o["account"])),
        ("post", url("account-reconnect", pk=o["account"])),
        ("get", url("composer")),
        ("post", url("composer")),
        ("post", url("composer-check")),
        ("get", url("media-file", pk=o["media"])),
        ("get", url("calendar")),
        ("get", url("publication-list")),
        ("get", url("publication-detail", pk=pk)),
        ("get", url("publication-edit", pk=pk)),
        ("get", url("publication-reschedule", pk=pk)),
        ("post", url("publication-reschedule", pk=pk)),
        ("post", url("publication-cancel", pk=pk)),
        ("post", url("publication-retry", pk=pk)),
        ("get", url("rendition-card", pk=pk, rendition_pk=rid)),
        ("post", url("rendition-retry", pk=pk, rendition_pk=rid)),
        ("post", url("rendition-resolve", pk=pk, rendition_pk=rid)),
        ("post", url("first-comment-retry", pk=pk, rendition_pk=rid)),
        ("post", url("first-comment-posted", pk=pk, rendition_pk=rid)),
        ("get", url("workspace-team")),
        ("post", url("workspace-invite")),
        ("post", url("workspace-member-role", user_id=o["member"])),
        ("post", url("workspace-member-remove", user_id=o["member"])),
        ("get", url("api-tokens")),
        ("post", url("api-token-create")),
        ("post", url("api-token-revoke", pk=o["token"])),
    ]


def test_another_workspaces_pages_are_404(as_charlie, objects):
    for method, url in workspace_urls("ws-a", objects):
        response = getattr(as_charlie, method)(url)
        assert response.status_code == 404, (method, url, response.status_code)


def test_another_workspaces_ids_are_404_in_ones_own_workspace(as_charlie, objects):
    """charlie's own workspace, with workspace A's ids: nothing is found."""
    aimed = [(m, u) for m, u in workspace_urls("ws-b", objects) if len(resolve(u).kwargs) > 1]
    assert len(aimed) == 18
    for method, url in aimed:
        response = getattr(as_charlie, method)(url)
        assert response.status_code == 404, (method, url, response.status_code)


def test_a_workspace_that_does_not_exist_is_404(as_alice, objects):
    assert as_alice.get("/w/no-such-space/").status_code == 404


def test_the_404_page_is_the_apps_own(as_charlie, objects):
    response = as_charlie.get("/w/ws-a/posts/")
    assert response.status_code == 404
    assert b"belongs to a workspace you are not a member of" in response.content


def test_anonymous_visitors_are_sent_to_log_in(client, objects):
    for method, url in workspace_urls("ws-a", objects):
        response = getattr(client, method)(url)
        assert response.status_code == 302, (method, url)
        assert response["Location"].startswith("/login/?next=")


VIEWER_REFUSED = {
    "sandbox-connect",
    "account-disconnect",
    "account-reconnect",
    "composer",
    "composer-check",
    "publication-edit",
    "publication-reschedule",
    "publication-cancel",
    "publication-retry",
    "rendition-retry",
    "rendition-resolve",
    "first-comment-retry",
    "first-comment-posted",
    "workspace-invite",
    "workspace-member-role",
    "workspace-member-remove",
    "api-tokens",
    "api-token-create",
    "api-token-revoke",
}


def test_a_viewer_reads_but_every_write_is_refused(as_vera, objects):
    for method, url in workspace_urls("ws-a", objects):
        response = getattr(as_vera, method)(url)
        name = _name(url)
        if name in VIEWER_REFUSED:
            assert response.status_code == 403, (method, url, response.status_code)
        else:
            assert response.status_code == 200, (method, url, response.status_code)


def test_a_viewer_cannot_schedule(as_vera, workspace_a, objects):
    response = as_vera.post(
        reverse("composer", kwargs={"workspace_slug": "ws-a"}),
        {
            "segment_count": "1",
            "segment-0-text": "hello",
            "destinations": [str(objects["account"])],
            "op": "publish_now",
        },
    )
    assert response.status_code == 403
    assert b"do that here" in response.content
    assert Publication.objects.filter(segments__text="hello").count() == 0


def test_a_viewer_sees_no_controls_on_a_post(as_vera, objects):
    url = reverse(
        "publication-detail", kwargs={"workspace_slug": "ws-a", "pk": objects["publication"]}
    )
    page = as_vera.get(url).content.decode()
    assert "in A" in page
    for control in ("Retry now", "Cancel post", ">Edit<", "Reschedule", "Compose"):
        assert control not in page


def test_an_editor_composes_but_does_not_administer(as_bob, objects):
    expected = {
        "sandbox-connect": 403,
        "account-disconnect": 403,
        "account-reconnect": 403,
        "workspace-invite": 403,
        "workspace-member-role": 403,
        "workspace-member-remove": 403,
        "api-tokens": 403,
        "api-token-create": 403,
        "api-token-revoke": 403,
    }
    for method, url in workspace_urls("ws-a", objects):
        name = _name(url)
        if name in expected or method == "get":
            response = getattr(as_bob, method)(url)
            assert response.status_code == expected.get(name, 200), (method, url)


def test_organization_pages_are_404_for_outsiders(as_charlie, as_bob, org_a):
    for client in (as_charlie, as_bob):  # bob is in a workspace, not the organization
        assert client.get("/o/org-a/").status_code == 404
        assert client.post("/o/org-a/invite/", {"email": "x@example.com"}).status_code == 404


def _name(url: str) -> str:
    return resolve(url).url_name


def _inactive_urls(objects: dict) -> list[tuple[str, str]]:
    """Every workspace page, the write pages beyond workspace_urls, and the organization's."""

    def url(name: str, **kwargs) -> str:
        return reverse(name, kwargs={"workspace_slug": "ws-a", **kwargs})

    return [
        *workspace_urls("ws-a", objects),
        ("post", url("webhook-create")),
        ("post", url("series-create")),
        ("post", url("post-import")),
        ("get", url("queue")),
        ("post", url("queue-move")),
        ("post", url("queue-slots")),
        ("post", url("connect-start", platform="mastodon")),
        ("post", url("connect-password", platform="bluesky")),
        ("get", "/o/org-a/"),
        ("post", "/o/org-a/invite/"),
        ("post", "/o/org-a/workspaces/new/"),
        ("post", f"/o/org-a/members/{objects['member']}/role/"),
        ("post", f"/o/org-a/members/{objects['member']}/remove/"),
    ]


# Views that take POST but change nothing.
READS_BY_POST = {"composer-check"}


@pytest.mark.parametrize("state", [Organization.State.SUSPENDED, Organization.State.DELETED])
def test_an_inactive_organization_is_read_only_in_the_web_app(as_alice, objects, org_a, state):
    """Every page still opens; every write is refused with the reason, and nothing changes."""
    Organization.objects.filter(pk=org_a.pk).update(state=state)
    memberships = WorkspaceMembership.objects.count()
    for method, url in _inactive_urls(objects):
        response = getattr(as_alice, method)(url, HTTP_REFERER=url)
        if method == "get" or _name(url) in READS_BY_POST:
            assert response.status_code == 200, (method, url, response.status_code)
            continue
        assert response.status_code == 403, (method, url, response.status_code)
        assert f"Org A is {state}" in response.content.decode(), url
        assert "read-only" in response["X-Refusal"]
    assert WorkspaceMembership.objects.count() == memberships
    page = as_alice.get("/w/ws-a/").content.decode()
    assert "this workspace is read-only" in page


def test_a_suspended_organizations_composer_post_stores_nothing(as_alice, objects, org_a):
    def compose(op: str):
        return as_alice.post(
            reverse("composer", kwargs={"workspace_slug": "ws-a"}),
            {
                "segment_count": "1",
                "segment-0-text": "while suspended",
                "destinations": [str(objects["account"])],
                "op": op,
            },
            HTTP_HX_REQUEST="true",
        )

    Organization.objects.filter(pk=org_a.pk).update(state=Organization.State.SUSPENDED)
    before = Publication.objects.count()
    for op in ("save_draft", "publish_now"):
        response = compose(op)
        assert response.status_code == 403
        assert "suspended" in response["X-Refusal"]
    assert Publication.objects.count() == before
    assert not Publication.objects.filter(segments__text="while suspended").exists()

    Organization.objects.filter(pk=org_a.pk).update(state=Organization.State.ACTIVE)
    assert compose("save_draft").status_code == 200  # htmx: an HX-Redirect to the post
    assert Publication.objects.filter(segments__text="while suspended").count() == 1


def test_the_organization_page_opens_for_owners_and_admins_only(client, as_alice, bob, org_a):
    assert as_alice.get("/o/org-a/").status_code == 200
    OrganizationMembership.objects.create(organization=org_a, user=bob, role="admin")
    client.force_login(bob)
    assert client.get("/o/org-a/").status_code == 200
    OrganizationMembership.objects.filter(user=bob).update(role="member")
    assert client.get("/o/org-a/").status_code == 403
