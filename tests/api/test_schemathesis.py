"""Property-based run of every documented operation against the live WSGI app.

Schemathesis reads /api/schema/ and, per operation, sends a few generated requests that
fit the schema (positive) and a few that break it (negative), authenticated with a
full-scope token of a workspace that has an account, a media file and a publication. Each
response must not be a 5xx, must have a documented status and content type, and must match
its documented schema; bodies the schema forbids must be refused.

Bounded: derandomized, a few examples per operation and mode, no shrinking of passes, and
a time budget for the whole run.
"""

import time

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

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
BUDGET_S = 120.0
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]

FORM_OPERATIONS = {"POST /api/v1/media"}
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


def _exercise(operation, mode, checks, token) -> None:
    # A fresh token per operation and mode (the fuzzer may revoke the one it holds with
    # DELETE /tokens/{id}), fixed so negative cases never drop or mangle it.
    headers = {"Authorization": f"Bearer {token()}"}

    @settings(
        max_examples=EXAMPLES_PER_MODE,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode, headers=headers))
    def run(case) -> None:
        case.call_and_validate(checks=checks)

    try:
        run()
    except Unsatisfiable:
        # Nothing of this operation can be made invalid (no parameters, no body).
        if not mode.is_negative:
            raise


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


def test_the_api_holds_to_its_schema_under_generated_requests(seeded, settings_, wsgi_in_test):
    app = get_wsgi_application()
    schema = schemathesis.openapi.from_wsgi("/api/schema/", app, config=CONFIG)
    deadline = time.monotonic() + BUDGET_S
    ran: list[str] = []

    def fresh_token() -> str:
        return services.api_token_create(workspace=seeded, name="fuzz", scopes=ALL_SCOPES).clear

    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            if time.monotonic() > deadline:
                pytest.fail(f"Over the {BUDGET_S:.0f} s budget after {len(ran)} runs: {ran}")
            checks = CHECKS
            # Form fields are text whatever the schema's type: "false" is a fine alt text.
            if mode.is_negative and operation.label not in FORM_OPERATIONS:
                checks = [*CHECKS, negative_data_rejection]

            _exercise(operation, mode, checks, fresh_token)
            ran.append(f"{operation.label} [{mode}]")

    assert len(ran) >= 2 * 20, ran


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
