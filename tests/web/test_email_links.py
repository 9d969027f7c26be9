"""Links in emails come from SITE_URL: a request with a spoofed Host header (accepted, as a
deployment with a wildcard ALLOWED_HOSTS would) never puts its host in front of a token."""

import re

import pytest
from django.core import mail

SITE = "https://post.example.com"
EVIL = "evil.example"


@pytest.fixture(autouse=True)
def _any_host_accepted(settings):
    settings.SITE_URL = SITE
    settings.ALLOWED_HOSTS = ["*"]


def _links(body: str) -> list[str]:
    return re.findall(r"https?://\S+", body)


def test_a_password_reset_link_ignores_the_host_header(client, alice):
    response = client.post(
        "/password-reset/", {"email": alice.email}, HTTP_HOST=EVIL, HTTP_X_FORWARDED_HOST=EVIL
    )
    assert response.status_code == 302
    [message] = mail.outbox
    [link] = _links(message.body)
    assert link.startswith(f"{SITE}/reset/")
    assert EVIL not in message.body


@pytest.mark.parametrize(
    ("url", "data"),
    [
        ("/w/ws-a/team/invite/", {"email": "newbie@example.com", "role": "viewer"}),
        ("/o/org-a/invite/", {"email": "newbie@example.com", "role": "member"}),
    ],
)
def test_an_invitation_link_ignores_the_host_header(
    as_alice, url, data, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        as_alice.post(url, data, HTTP_HOST=EVIL)
    [message] = mail.outbox
    links = _links(message.body)
    assert links and all(link.startswith(SITE + "/") for link in links)
    assert EVIL not in message.body
