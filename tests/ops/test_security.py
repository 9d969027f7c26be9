import re

import pytest

# A <script> tag without a src attribute is inline script, which the policy forbids.
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)


def test_pages_carry_a_content_security_policy_without_inline_script(client, db):
    response = client.get("/login/")
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy


def test_a_view_may_set_its_own_policy(client, db, settings, tmp_path):
    from apps.common.media_urls import signed_media_url

    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    (tmp_path / "a.txt").write_text("hello")
    response = client.get(signed_media_url("a.txt", 60).removeprefix(settings.SITE_URL))
    assert response["Content-Security-Policy"] == "default-src 'none'; sandbox"


@pytest.mark.parametrize("path", ["/login/", "/admin/login/", "/api/docs/"])
def test_our_pages_have_no_inline_script(client, db, path):
    response = client.get(path, follow=True)  # the admin's login is the site's
    assert response.status_code == 200
    assert INLINE_SCRIPT.findall(response.content.decode()) == []


def test_the_api_docs_load_their_start_up_script_from_a_url(client, db):
    response = client.get("/api/docs/?script=")
    assert response.status_code == 200
    assert "javascript" in response["Content-Type"]


def test_the_policy_can_be_turned_off_from_the_environment(client, db, settings):
    settings.CONTENT_SECURITY_POLICY = ""
    assert "Content-Security-Policy" not in client.get("/login/")
