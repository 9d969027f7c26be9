"""Property-based run of every documented operation against the live WSGI app.

Schemathesis reads /api/schema/ and, per operation, sends a few generated requests that
fit the schema (positive) and a few that break it (negative), authenticated with a
full-scope token of a workspace that has an account, a media file and a publication. Every
operation of the schema runs, and the schema documents every route of the API, with
Schemathesis's default checks: no 5xx, documented statuses, content types, headers and
bodies, bodies the schema forbids refused, requests it allows accepted, authentication
enforced (a probe without the token, and one with a wrong one, must be refused), and the
rest of its defaults, on every operation. The one exception, "schema-valid requests
accepted" on the few operations whose refusals depend on what no schema can state, is
listed below with its reason. Opaque values were made statable instead: a cursor has a
pattern, a time zone is one of the server's zone names, a status filter is a list.

Bounded: derandomized, a few examples per operation and mode, no shrinking of passes, and
a time budget for the whole run (it takes about 25 s on 2 cores).
"""

import time

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import EndpointEnumerator
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from apps.accounts import services
from apps.renditions.models import normalize_error
from tests.conftest import ALL_SCOPES
from tests.factories import (
    MediaAssetFactory,
    PublicationFactory,
    RenditionFactory,
    SocialAccountFactory,
)

EXAMPLES_PER_MODE = 8
BUDGET_S = 55.0

# Requests the schema allows that the server refuses (400) for a reason a schema cannot
# state; positive_data_acceptance does not apply to them, and only to them:
REFUSED_FOR_REASONS_A_SCHEMA_CANNOT_STATE = {
    # The file's bytes decide (sniffed and probed content), not its declared type.
    "POST /api/v1/media": "content sniffing",
    # A publication's rules depend on the destinations' platforms and on what is stored.
    "POST /api/v1/publications": "platform rules",
    "POST /api/v1/publications/validate": "platform rules",
    "PATCH /api/v1/publications/{id}": "platform rules",
    # An RFC 5545 rule and its first occurrence (a real calendar date) are checked by a parser.
    "POST /api/v1/series": "recurrence rule",
    "POST /api/v1/series/preview": "recurrence rule",
    "PATCH /api/v1/series/{id}": "recurrence rule",
    # latency_ms and hang_s are bounded together (SANDBOX_MAX_DELAY_S), each key alone.
    "POST /api/v1/accounts": "bounds of two keys together",
    # A webhook URL must resolve, to a public address, over https.
    "POST /api/v1/webhooks": "URL resolution",
    "PATCH /api/v1/webhooks/{id}": "URL resolution",
    # A link expires in the future, within 90 days of the moment it is made.
    "POST /api/v1/portal-links": "a time relative to now",
}
# A body the schema forbids must be refused with a 4xx; 413 (too large) counts too.
CONFIG = schemathesis.Config.from_dict(
    {
        "checks": {
            "negative_data_rejection": {
                "expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 429]
            }
        }
    }
)


def _exercise(operation, mode, excluded, token) -> None:
    # A fresh token per operation and mode (the fuzzer may revoke the one it holds with
    # DELETE /tokens/{id}), given with the call so that negative cases never drop or
    # mangle it and the authentication check knows it is a real one.
    headers = {"Authorization": f"Bearer {token()}"}

    @settings(
        max_examples=EXAMPLES_PER_MODE,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case) -> None:
        case.call_and_validate(headers=headers, excluded_checks=excluded)

    try:
        run()
    except Unsatisfiable:
        # Nothing of this operation can be made invalid (no parameters, no body).
        if not mode.is_negative:
            raise


def routed_operations() -> set[str]:
    """Every method on every route of the API, read from the URL configuration (not from
    the schema), named as Schemathesis names operations."""
    return {
        f"{method} {path.rstrip('/').replace('{pk}', '{id}')}"
        for path, _regex, method, _view in EndpointEnumerator().get_api_endpoints()
        if path.startswith("/api/v1/")
    }


@pytest.fixture
def seeded(workspace_a):
    """A workspace with something behind every id the fuzzer may guess."""
    account = SocialAccountFactory(workspace=workspace_a, platform="sandbox")
    MediaAssetFactory(workspace=workspace_a)
    publication = PublicationFactory(workspace=workspace_a, status="failed")
    RenditionFactory(
        publication=publication,
        social_account=account,
        status="failed",
        ambiguous=True,
        last_error=normalize_error({"kind": "timeout_after_send", "message": "No answer."}),
    )
    return workspace_a


def test_the_api_holds_to_its_schema_under_generated_requests(
    seeded, alice, settings_, wsgi_in_test
):
    app = get_wsgi_application()
    schema = schemathesis.openapi.from_wsgi("/api/schema/", app, config=CONFIG)
    deadline = time.monotonic() + BUDGET_S
    ran: list[str] = []

    def fresh_token() -> str:
        # Made by an owner, as most tokens are: "assigned=me" and client links need a person.
        return services.api_token_create(
            workspace=seeded, name="fuzz", scopes=ALL_SCOPES, created_by=alice
        ).clear

    operations = [result.ok() for result in schema.get_all_operations()]
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            if time.monotonic() > deadline:
                pytest.fail(f"Over the {BUDGET_S:.0f} s budget after {len(ran)} runs: {ran}")
            excluded = []
            if operation.label in REFUSED_FOR_REASONS_A_SCHEMA_CANNOT_STATE:
                excluded.append(positive_data_acceptance)

            _exercise(operation, mode, excluded, fresh_token)
            ran.append(operation.label)

    assert sorted(set(ran)) == sorted(routed_operations())
    assert len(ran) == 2 * len(operations)
    assert set(REFUSED_FOR_REASONS_A_SCHEMA_CANNOT_STATE) <= set(ran)


@pytest.fixture
def settings_(settings):
    # The fuzzer sends far more than a person would: no rate limit for this run, and room
    # for the token it takes per operation and the ones it mints.
    settings.API_THROTTLE_RATE = ""
    settings.API_TOKENS_PER_WORKSPACE = 100_000
    return settings


@pytest.fixture
def wsgi_in_test():
    """Keep the test's transaction open across WSGI calls: Django closes connections at
    the start and end of each request, which would end it (its test client does the same
    as this)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
