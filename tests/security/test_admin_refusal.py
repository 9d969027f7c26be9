"""A signed-in person who is not one of the site's operators is told the admin is not
theirs, with a way back to the app, rather than shown a login form."""

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/admin/", "/admin/accounts/user/", "/admin/login/"])
def test_a_signed_in_non_operator_is_told_the_admin_is_for_operators(client, path):
    client.force_login(UserFactory(email="member@example.com", is_staff=False))

    response = client.get(path, follow=True)

    body = response.content.decode()
    assert response.status_code == 403
    assert "This area is for the site's operators" in body
    assert 'href="/"' in body
    assert 'name="password"' not in body


def test_a_signed_out_visitor_still_gets_the_sites_login(client):
    response = client.get("/admin/")

    assert response.status_code == 302
    assert client.get(response["Location"])["Location"].startswith("/login/")
