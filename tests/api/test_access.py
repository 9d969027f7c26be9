"""Every operation of the API, read from its OpenAPI schema, walked: 401 without a token and
with a revoked one, 403 for a token lacking the scope, and 404 for another workspace's ids
(never 403, never its data, nothing of it changed). A new endpoint is walked without editing
this file; one whose path names an object no fixture provides fails the walk."""

from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Model
from rest_framework.test import APIClient

from apps.accounts import services
from apps.planning.evergreen import evergreen_pause
from apps.series.services import series_pause
from tests.api.helpers import bearer, error, png_bytes
from tests.api.isolation_fixtures import (
    OBJECT_BY_COLLECTION,
    Operation,
    api_operations,
    prepare_failed_reply,
    prepare_first_comment,
    prepare_queueable,
    prepare_resubmittable,
    workspace_objects,
    workspace_snapshot,
)
from tests.conftest import ALL_SCOPES

Objects = dict[str, Model]

OPERATIONS = api_operations()
BY_ID = {op.operation_id: op for op in OPERATIONS}

# The scopes each operation needs, every one of them (None: any valid token). This is the
# contract, stated here rather than read from the views: an operation missing here fails.
SERIES_CHANGE = ("write", "publish")
SCOPES: dict[str, tuple[str, ...] | None] = {
    "me_retrieve": None,
    "capabilities_retrieve": ("read",),
    "accounts_list": ("read",),
    "accounts_create": ("admin",),
    "accounts_retrieve": ("read",),
    "accounts_destroy": ("admin",),
    "media_list": ("read",),
    "media_create": ("write",),
    "media_retrieve": ("read",),
    "media_partial_update": ("write",),
    "media_destroy": ("write",),
    "publications_list": ("read",),
    "publications_create": ("write",),
    "publications_bulk_create": ("write",),
    "publications_validate_create": ("read",),
    "publications_retrieve": ("read",),
    "publications_partial_update": ("write",),
    "publications_destroy": ("write",),
    "publications_retry_create": ("publish",),
    "publications_queue_create": ("write", "publish"),
    "queue_slots_retrieve": ("read",),
    "queue_slots_update": ("write",),
    "accounts_queue_slots_retrieve": ("read",),
    "accounts_queue_slots_update": ("write",),
    "accounts_queue_slots_destroy": ("write",),
    "renditions_retrieve": ("read",),
    "renditions_resolve_create": ("publish",),
    "renditions_first_comment_retry_create": ("publish",),
    "renditions_first_comment_mark_posted_create": ("publish",),
    "renditions_metrics_retrieve": ("read",),
    "analytics_retrieve": ("read",),
    "approval_rule_retrieve": ("read",),
    "approval_rule_update": ("admin",),
    "reviews_list": ("read",),
    "reviews_retrieve": ("read",),
    "reviews_submit_create": ("write",),
    "reviews_approve_create": ("publish",),
    "reviews_request_changes_create": ("publish",),
    "reviews_hold_create": ("publish",),
    "reviews_comments_create": ("write",),
    "series_list": ("read",),
    "series_create": SERIES_CHANGE,
    "series_preview_create": ("read",),
    "series_retrieve": ("read",),
    "series_partial_update": SERIES_CHANGE,
    "series_destroy": SERIES_CHANGE,
    "series_preview_list": ("read",),
    "series_pause_create": SERIES_CHANGE,
    "series_resume_create": SERIES_CHANGE,
    "series_end_create": SERIES_CHANGE,
    "evergreen_list": ("read",),
    "evergreen_create": SERIES_CHANGE,
    "evergreen_retrieve": ("read",),
    "evergreen_partial_update": SERIES_CHANGE,
    "evergreen_shares_list": ("read",),
    "evergreen_next_retrieve": ("read",),
    "evergreen_pause_create": SERIES_CHANGE,
    "evergreen_resume_create": SERIES_CHANGE,
    "evergreen_skip_create": SERIES_CHANGE,
    "evergreen_stop_create": SERIES_CHANGE,
    "tokens_list": ("read",),
    "tokens_create": ("admin",),
    "tokens_destroy": ("admin",),
    "webhooks_list": ("read",),
    "webhooks_create": ("admin",),
    "webhooks_retrieve": ("read",),
    "webhooks_partial_update": ("admin",),
    "webhooks_destroy": ("admin",),
    "webhooks_deliveries_list": ("read",),
    "webhooks_rotate_secret_create": ("admin",),
    "webhooks_deliveries_redeliver_create": ("admin",),
    "webhooks_test_create": ("admin",),
    "portal_links_list": ("read",),
    "portal_links_create": ("admin",),
    "portal_links_retrieve": ("read",),
    "portal_links_destroy": ("admin",),
    "comments_list": ("read",),
    "comments_retrieve": ("read",),
    "comments_reply_create": ("publish",),
    "comments_done_create": ("write",),
    "comments_assign_create": ("write",),
    "comments_hide_create": ("publish",),
    "comments_delete_create": ("publish",),
    "replies_list": ("read",),
    "replies_retrieve": ("read",),
    "replies_approve_create": ("publish",),
    "replies_reject_create": ("publish",),
    "replies_retry_create": ("publish",),
    "replies_mark_sent_create": ("publish",),
}


def _upload(objects: Objects) -> dict:
    """A fresh file each call (an upload is read once)."""
    return {"file": SimpleUploadedFile("a.png", png_bytes(), content_type="image/png")}


def _template(objects: Objects) -> dict:
    return {"segments": [{"text": "Hi"}], "destinations": [{"account": objects["account"].pk}]}


# Bodies the operations need to succeed (others send none), built from the objects when
# callable.
BODIES: dict[str, Any] = {
    "accounts_create": {"platform": "sandbox", "handle": "walker"},
    "media_create": _upload,
    "media_partial_update": {"alt_text": "A red square"},
    "publications_create": lambda objects: {
        "segments": [{"text": "Hi", "media": [{"id": objects["media"].pk}]}],
        "destinations": [{"account": objects["account"].pk}],
    },
    "publications_validate_create": {"text": "Hi"},
    "publications_bulk_create": {"items": [{"text": "Hi"}]},
    "publications_partial_update": {"revision": 1, "text": "Edited"},
    "renditions_resolve_create": {"outcome": "failed"},
    "approval_rule_update": {"required": False},
    "reviews_submit_create": lambda objects: {"revision": objects["review"].revision},
    "reviews_approve_create": lambda objects: {"revision": objects["review"].revision},
    "reviews_hold_create": lambda objects: {"revision": objects["review"].revision},
    "reviews_request_changes_create": lambda objects: {
        "revision": objects["review"].revision,
        "note": "Shorter",
    },
    "reviews_comments_create": {"body": "Looks good"},
    "publications_queue_create": {"revision": 1},
    "queue_slots_update": {"slots": [{"weekday": "mon", "time": "09:00"}]},
    "accounts_queue_slots_update": {"slots": [{"weekday": "tue", "time": "18:30"}]},
    "series_create": lambda objects: {
        "name": "Weekly",
        "template": _template(objects),
        "rrule": "FREQ=WEEKLY",
        "dtstart": "2040-01-02T09:00",
        "timezone": "UTC",
    },
    "series_preview_create": {"rrule": "FREQ=DAILY", "dtstart": "2040-01-02T09:00"},
    "series_partial_update": {"name": "Renamed"},
    "series_pause_create": {},
    "series_end_create": {},
    "evergreen_create": lambda objects: {"publications": [objects["publication"].pk]},
    "evergreen_partial_update": {"every_days": 14, "variations": ["Again, in other words"]},
    "tokens_create": {"name": "n", "scopes": ["read"]},
    "webhooks_create": {"url": "https://93.184.215.14/new"},
    "webhooks_partial_update": {"description": "Renamed"},
    "comments_reply_create": {"text": "Thanks!"},
    "comments_done_create": {"done": True},
    "comments_assign_create": {"assignee": None},
    "comments_hide_create": {"hidden": True},
}
# Operations whose body names objects: with an outsider's objects, the body is refused.
NAMES_IN_BODY = {"publications_create", "series_create", "evergreen_create"}
# What an operation needs of its object beyond workspace_objects().
PREPARE: dict[str, Callable[[Objects], Any]] = {
    "series_resume_create": lambda objects: series_pause(series=objects["series"]),
    "evergreen_resume_create": lambda objects: evergreen_pause(evergreen=objects["evergreen"]),
    "publications_queue_create": prepare_queueable,
    "replies_retry_create": prepare_failed_reply,
    "replies_mark_sent_create": lambda objects: prepare_failed_reply(objects, "unknown"),
    "reviews_submit_create": prepare_resubmittable,
    "renditions_first_comment_retry_create": lambda objects: prepare_first_comment(
        objects, "failed"
    ),
    "renditions_first_comment_mark_posted_create": lambda objects: prepare_first_comment(
        objects, "unknown"
    ),
}


def _fixture_missing(op: Operation, parameter: str) -> str:
    return (
        f"{op.operation_id} ({op.method.upper()} {op.path}) lacks a fixture for its path "
        f"parameter {parameter!r}: map the collection before it in OBJECT_BY_COLLECTION and "
        "give workspace_objects() an object of that kind (tests/api/isolation_fixtures.py)."
    )


def _ids(op: Operation, path_objects: dict[str, Objects]) -> dict[str, int]:
    """The id each path parameter takes, from the objects given for that parameter."""
    ids = {}
    for parameter in op.parameters:
        kind = op.object_kind(parameter)
        objects = path_objects[parameter]
        if kind not in objects:
            pytest.fail(_fixture_missing(op, parameter))
        ids[parameter] = objects[kind].pk
    return ids


def call(
    op: Operation,
    client: APIClient,
    objects: Objects,
    path_objects: dict[str, Objects] | None = None,
):
    """Call `op`: its path names `objects` (or, per parameter, `path_objects`), and so does
    its body when it names any."""
    path_objects = path_objects or dict.fromkeys(op.parameters, objects)
    url = op.url(_ids(op, path_objects))
    body = BODIES.get(op.operation_id)
    if callable(body):
        body = body(objects)
    return getattr(client, op.method)(url, body, format="multipart" if op.multipart else "json")


def _prepare(op: Operation, *workspaces_objects: Objects) -> None:
    for objects in workspaces_objects:
        PREPARE.get(op.operation_id, lambda _objects: None)(objects)


def _names(op: Operation) -> str:
    return f"{op.method.upper()} {op.path}"


ALL = pytest.mark.parametrize("op", OPERATIONS, ids=_names)
# Operations that name an object of the workspace: in the path, or in the body.
NAMES_AN_OBJECT = [op for op in OPERATIONS if op.parameters or op.operation_id in NAMES_IN_BODY]


def _outsider_cases() -> list:
    """Each operation with all it names from the other workspace; an operation naming
    several objects, also with each one alone from the other workspace (their endpoint
    with my delivery, my endpoint with their delivery)."""
    cases = []
    for op in NAMES_AN_OBJECT:
        cases.append(pytest.param(op, op.parameters, id=f"{_names(op)} all theirs"))
        if len(op.parameters) > 1:
            cases += [
                pytest.param(op, (name,), id=f"{_names(op)} only {name} theirs")
                for name in op.parameters
            ]
    return cases


@pytest.fixture
def objects_a(workspace_a) -> Objects:
    return workspace_objects(workspace_a)


@pytest.fixture
def objects_b(workspace_b) -> Objects:
    return workspace_objects(workspace_b)


def test_the_schema_lists_every_resource_of_the_router():
    collections = {op.path.split("/")[3] for op in OPERATIONS}
    assert collections >= {"series", "webhooks", "publications", "tokens"}
    assert len(OPERATIONS) >= 39


@pytest.mark.parametrize("op", [op for op in OPERATIONS if op.parameters], ids=_names)
def test_every_path_parameter_names_a_known_kind_of_object(op):
    for parameter in op.parameters:
        assert op.object_kind(parameter) is not None, _fixture_missing(op, parameter)


@ALL
def test_every_operation_states_the_scopes_it_needs(op):
    assert op.operation_id in SCOPES, (
        f"{op.operation_id} ({_names(op)}) is not in SCOPES: state the scopes it needs."
    )


@ALL
def test_without_a_token_it_is_401(op, objects_a):
    response = call(op, APIClient(), objects_a)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert error(response)["code"] == "UNAUTHENTICATED"


@ALL
def test_with_a_revoked_token_it_is_401(op, objects_a, workspace_a, make_token):
    issued = make_token(workspace_a)
    services.api_token_revoke(token=issued.token)

    response = call(op, bearer(issued.clear), objects_a)

    assert response.status_code == 401
    assert error(response)["code"] == "INVALID_TOKEN"


@pytest.mark.parametrize(
    ("op", "scope"),
    [
        pytest.param(op, scope, id=f"{_names(op)} needs {scope}")
        for op in OPERATIONS
        for scope in SCOPES.get(op.operation_id) or ()
    ],
)
def test_without_its_scope_it_is_403(op, scope, objects_a, workspace_a, make_token):
    _prepare(op, objects_a)
    client = bearer(make_token(workspace_a, scopes=[s for s in ALL_SCOPES if s != scope]).clear)

    response = call(op, client, objects_a)

    assert response.status_code == 403
    err = error(response)
    assert err["code"] == "INSUFFICIENT_SCOPE"
    assert scope in err["details"]["required"]


@pytest.mark.parametrize(("op", "theirs"), _outsider_cases())
def test_another_workspaces_ids_are_404_and_change_nothing(
    op, theirs, api_a, workspace_b, objects_a, objects_b
):
    _prepare(op, objects_a, objects_b)
    path_objects = {name: objects_b if name in theirs else objects_a for name in op.parameters}
    before = workspace_snapshot(workspace_b)

    response = call(op, api_a, objects_b, path_objects)

    assert response.status_code == 404, response.content
    assert error(response)["code"] == "NOT_FOUND"
    assert workspace_snapshot(workspace_b) == before


@pytest.mark.parametrize("op", NAMES_AN_OBJECT, ids=_names)
def test_the_same_operations_work_with_this_workspaces_ids(op, api_a, objects_a):
    _prepare(op, objects_a)

    response = call(op, api_a, objects_a)

    assert response.status_code < 400, response.content


LISTS = [
    op
    for op in OPERATIONS
    if op.method == "get" and not op.parameters and op.path.split("/")[-1] in OBJECT_BY_COLLECTION
]


@pytest.mark.parametrize("op", LISTS, ids=_names)
def test_lists_show_nothing_of_another_workspace(op, api_a, objects_a, objects_b):
    kind = OBJECT_BY_COLLECTION[op.path.split("/")[-1]]

    shown = {item["id"] for item in call(op, api_a, objects_a).json()["results"]}

    assert objects_a[kind].pk in shown
    assert objects_b[kind].pk not in shown
