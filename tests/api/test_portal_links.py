"""/api/v1/portal-links: client links made, listed and revoked with a token; the address
shown once; only a token made by a workspace admin makes one. /api/v1/reviews shows a
client's decision as the client's, and puts a post on hold."""

from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.utils import timezone

from apps.accounts import services as account_services
from apps.approvals.models import PortalLink
from apps.approvals.portal import portal_link_create
from apps.publishing.services.publications import publication_create
from apps.publishing.services.reviews import review_request_changes, review_submit
from apps.sandbox.services import sandbox_account_create
from tests.api.helpers import bearer, error, later

pytestmark = pytest.mark.django_db

URL = "/api/v1/portal-links"
ALL = ["read", "write", "publish", "admin"]


def token_of(user, workspace):
    issued = account_services.api_token_create(
        workspace=workspace, name=f"t-{user.pk}", scopes=ALL, created_by=user
    )
    return bearer(issued.clear)


def test_an_admins_token_makes_a_link_shown_once_and_revokes_it(workspace_a, alice):
    api = token_of(alice, workspace_a)
    post = publication_create(
        workspace=workspace_a, author=alice, segments=[{"text": "x"}], destinations=[]
    )
    body = {"label": "Acme", "expires_at": later(days=3), "publications": [post.pk]}

    response = api.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="k1")

    assert response.status_code == 201, response.content
    made = response.json()
    assert (made["label"], made["publications"], made["created_by"]) == (
        "Acme",
        [post.pk],
        "alice@example.com",
    )
    assert Client().get(urlsplit(made["url"]).path).status_code == 200
    replay = api.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert replay.json()["url"] is None  # the address is stored nowhere
    listed = api.get(URL).json()["results"]
    assert [link["id"] for link in listed] == [made["id"]]
    assert "url" not in listed[0]

    revoked = api.delete(f"{URL}/{made['id']}")

    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] is not None
    assert Client().get(urlsplit(made["url"]).path).status_code == 410


def test_only_a_token_made_by_an_admin_makes_one(workspace_a, make_token):
    operator = bearer(make_token(workspace_a).clear)  # made by no person

    response = operator.post(URL, {"label": "Acme", "expires_at": later()}, format="json")

    assert response.status_code == 403
    assert error(response)["code"] == "PERMISSION_DENIED"
    assert not PortalLink.objects.exists()


def test_the_body_is_checked(workspace_a, workspace_b, alice, charlie):
    api = token_of(alice, workspace_a)
    theirs = publication_create(
        workspace=workspace_b, author=charlie, segments=[{"text": "x"}], destinations=[]
    )

    too_late = api.post(URL, {"label": "A", "expires_at": later(days=91)}, format="json")
    foreign = api.post(
        URL, {"label": "A", "expires_at": later(), "publications": [theirs.pk]}, format="json"
    )
    unknown = api.post(URL, {"label": "A", "expires_at": later(), "x": 1}, format="json")

    assert (too_late.status_code, error(too_late)["details"]) == (
        400,
        {"expires_at": ["A link expires within 90 days from now."]},
    )
    assert foreign.status_code == 404
    assert unknown.status_code == 400
    assert not PortalLink.objects.exists()


def test_a_review_shows_the_clients_decision_and_an_admin_holds_a_post(workspace_a, alice, bob):
    api = token_of(alice, workspace_a)
    account = sandbox_account_create(workspace=workspace_a, handle="reviewed")
    post = publication_create(
        workspace=workspace_a,
        author=bob,
        segments=[{"text": "x"}],
        destinations=[{"account": account.pk}],
    )
    review_submit(publication=post, expected_revision=post.revision, actor=bob)
    link, _ = portal_link_create(
        workspace=workspace_a,
        actor=alice,
        label="Acme",
        expires_at=timezone.now() + timedelta(days=2),
    )
    review_request_changes(
        publication=post, expected_revision=post.revision, actor=alice, note="No", via=link
    )

    shown = api.get(f"/api/v1/reviews/{post.pk}").json()

    assert (shown["state"], shown["decided_by"], shown["decided_via"]) == (
        "changes_requested",
        None,
        {"id": link.pk, "label": "Acme"},
    )
    assert shown["comments"][-1]["client"] == {"id": link.pk, "label": "Acme"}
    review_submit(publication=post, expected_revision=post.revision, actor=bob)
    held = api.post(f"/api/v1/reviews/{post.pk}/hold", {"revision": post.revision}, format="json")
    assert held.status_code == 200, held.content
    assert (held.json()["state"], held.json()["decided_via"]) == ("on_hold", None)
