"""A platform is `supported` only with a passing live validation younger than 90 days; the
catalog, `/capabilities`, the MCP tool and the admin show it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from apps.providers.catalog import Readiness, get_capabilities
from apps.providers.live.models import PlatformValidation
from apps.providers.live.readiness import effective_capabilities, effective_capabilities_for

pytestmark = pytest.mark.django_db

NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
ALL_PASSED = [
    {"name": "publish", "status": "passed", "detail": ""},
    {"name": "lookup", "status": "passed", "detail": ""},
    {"name": "idempotency", "status": "passed", "detail": ""},
    {"name": "first_comment", "status": "passed", "detail": ""},
    {"name": "delete", "status": "passed", "detail": ""},
]


def _validation(platform="mastodon", *, age=timedelta(days=10), passed=True, **fields):
    finished = NOW - age
    return PlatformValidation.objects.create(
        platform=platform,
        api_version=fields.pop("api_version", "Mastodon 4.3.2"),
        account_handle="ops@mastodon.example",
        started_at=finished - timedelta(minutes=1),
        finished_at=finished,
        steps=fields.pop("steps", ALL_PASSED),
        passed=passed,
        **fields,
    )


def test_without_a_validation_the_file_decides():
    caps = effective_capabilities(now=NOW)

    assert caps["mastodon"].readiness is Readiness.EXPERIMENTAL
    assert caps["mastodon"].validation is None
    assert caps["sandbox"].readiness is Readiness.SUPPORTED  # built in, proven by our tests
    assert caps["mastodon"].as_dict()["validation"] is None


def test_a_passing_validation_younger_than_90_days_makes_the_platform_supported():
    validation = _validation(age=timedelta(days=89, hours=23))

    caps = effective_capabilities(now=NOW)["mastodon"]

    assert caps.readiness is Readiness.SUPPORTED and caps.is_supported
    assert caps.validated_at == validation.finished_at.isoformat()
    assert caps.validated_what == "publish, lookup, idempotency, first_comment, delete"
    assert caps.as_dict()["validation"] == {
        "passed_at": validation.finished_at.isoformat(),
        "api_version": "Mastodon 4.3.2",
        "steps_passed": ["publish", "lookup", "idempotency", "first_comment", "delete"],
    }
    # Only the platform validated moves; the file's catalog is untouched.
    assert effective_capabilities(now=NOW)["x"].readiness is Readiness.EXPERIMENTAL
    assert get_capabilities("mastodon").readiness is Readiness.EXPERIMENTAL


def test_a_validation_90_days_old_no_longer_counts():
    _validation(age=timedelta(days=90))

    assert effective_capabilities(now=NOW)["mastodon"].readiness is Readiness.EXPERIMENTAL
    assert effective_capabilities_for("mastodon", now=NOW).validation is None


def test_a_failed_validation_never_counts_and_the_newest_passing_one_is_shown():
    _validation(age=timedelta(days=1), passed=False)
    _validation(age=timedelta(days=40), api_version="Mastodon 4.2.0")
    newest = _validation(age=timedelta(days=5), api_version="Mastodon 4.3.2")

    caps = effective_capabilities_for("mastodon", now=NOW)

    assert caps.readiness is Readiness.SUPPORTED
    assert caps.validation["passed_at"] == newest.finished_at.isoformat()
    assert caps.validation["api_version"] == "Mastodon 4.3.2"
    assert effective_capabilities(now=NOW)["mastodon"].validation == caps.validation


def test_steps_not_offered_are_not_claimed_as_validated():
    steps = [
        {"name": "publish", "status": "passed", "detail": ""},
        {"name": "lookup", "status": "passed", "detail": ""},
        {"name": "idempotency", "status": "not_offered", "detail": ""},
        {"name": "first_comment", "status": "not_offered", "detail": ""},
        {"name": "delete", "status": "passed", "detail": ""},
    ]
    _validation("x", steps=steps, api_version="API v2")

    caps = effective_capabilities(now=NOW)["x"]

    assert caps.validated_what == "publish, lookup, delete"


def test_capabilities_show_the_validation(api_a):
    validation = _validation(age=timedelta(days=1), api_version="Mastodon 4.3.2")
    validation.finished_at = datetime.now(UTC) - timedelta(days=1)
    validation.save(update_fields=["finished_at"])

    response = api_a.get("/api/v1/capabilities")

    assert response.status_code == 200
    platforms = {p["platform"]: p for p in response.json()["platforms"]}
    assert platforms["mastodon"]["readiness"] == "supported"
    assert platforms["mastodon"]["validation"]["api_version"] == "Mastodon 4.3.2"
    assert platforms["mastodon"]["validated_what"].startswith("publish, lookup")
    assert platforms["x"]["readiness"] == "experimental"
    assert platforms["x"]["validation"] is None
    # The existing fields stay.
    assert {"text", "media", "idempotency", "first_comment"} <= set(platforms["x"])


def test_the_admin_lists_validations_read_only(admin_client):
    validation = _validation()

    listing = admin_client.get(reverse("admin:providers_platformvalidation_changelist"))
    detail = admin_client.get(
        reverse("admin:providers_platformvalidation_change", args=[validation.pk])
    )
    add = admin_client.get(reverse("admin:providers_platformvalidation_add"))

    assert listing.status_code == 200
    assert "Mastodon 4.3.2" in listing.content.decode()
    assert detail.status_code == 200
    assert add.status_code == 403


def _recent(platform="mastodon"):
    validation = _validation(platform)
    validation.finished_at = datetime.now(UTC) - timedelta(days=1)
    validation.save(update_fields=["finished_at"])
    return validation


def test_the_mcp_tool_shows_the_validation(workspace_a, make_token, monkeypatch):
    from apps.api.mcp import tools
    from tests.mcp.test_tools import context

    monkeypatch.setattr(tools, "close_old_connections", lambda: None)
    _recent("x")
    ctx = context(make_token(workspace_a).token)

    one = tools.list_capabilities(ctx, platform="x").structured_content["platforms"][0]
    every = tools.list_capabilities(ctx).structured_content["platforms"]

    assert (one["readiness"], one["validation"]["api_version"]) == ("supported", "Mastodon 4.3.2")
    assert {p["platform"]: p["readiness"] for p in every}["x"] == "supported"
    assert {p["platform"]: p["readiness"] for p in every}["mastodon"] == "experimental"


def test_the_catalog_file_cannot_declare_an_external_platform_supported():
    from apps.providers.catalog import CATALOG_PATH, _parse

    entry = dict(json.loads(CATALOG_PATH.read_text())["platforms"]["x"])
    entry.update(readiness="supported", validated_at="2027-01-01", validated_what="all")

    with pytest.raises(ValueError, match="recorded live validation"):
        _parse("x", entry)
