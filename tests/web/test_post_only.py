"""A POST-only action's address opened with GET (a reload of the page a refused form
answered, a copied link) leads back to the page holding the form, never to a bare 405."""

import pytest

from apps.webhooks.endpoints import webhook_endpoint_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint(workspace_a):
    return webhook_endpoint_create(workspace=workspace_a, url="https://93.184.216.34/in")[0]


@pytest.mark.parametrize(
    ("action", "page"),
    [
        ("webhooks/new/", "webhooks/"),
        ("webhooks/{endpoint}/toggle/", "webhooks/{endpoint}/"),
        ("webhooks/{endpoint}/rotate/", "webhooks/{endpoint}/"),
        ("webhooks/{endpoint}/delete/", "webhooks/{endpoint}/"),
        ("webhooks/{endpoint}/deliveries/7/redeliver/", "webhooks/{endpoint}/"),
        ("webhooks/{endpoint}/test/", "webhooks/{endpoint}/"),
        ("series/new/", "series/"),
        ("series/3/pause/", "series/3/"),
        ("series/3/resume/", "series/3/"),
        ("series/3/delete/", "series/3/"),
        ("tokens/new/", "tokens/"),
        ("tokens/4/revoke/", "tokens/"),
        ("team/invite/", "team/"),
        ("team/invitations/5/resend/", "team/"),
        ("team/invitations/5/revoke/", "team/"),
        ("team/6/role/", "team/"),
        ("team/6/remove/", "team/"),
    ],
)
def test_a_get_of_a_workspace_action_leads_back_to_its_page(as_alice, endpoint, action, page):
    response = as_alice.get("/w/ws-a/" + action.format(endpoint=endpoint.pk))

    assert response.status_code == 302
    assert response["Location"] == "/w/ws-a/" + page.format(endpoint=endpoint.pk)


@pytest.mark.parametrize(
    "action", ["invite/", "members/6/role/", "members/6/remove/", "invitations/5/revoke/"]
)
def test_a_get_of_an_organization_action_leads_back_to_its_page(as_alice, org_a, action):
    response = as_alice.get(f"/o/{org_a.slug}/{action}")

    assert response.status_code == 302
    assert response["Location"] == f"/o/{org_a.slug}/"


def test_a_get_of_an_invitation_join_leads_home(as_alice):
    response = as_alice.get("/invitations/join/9/")

    assert response.status_code == 302
    assert response["Location"] == "/"


def test_access_is_checked_before_the_redirect_and_other_methods_stay_405(as_charlie, as_alice):
    assert as_charlie.get("/w/ws-a/tokens/new/").status_code == 404
    assert as_alice.put("/w/ws-a/tokens/new/").status_code == 405
