"""The MCP tools. Each one is the API endpoint it mirrors, reached another way:

| tool                   | API endpoint                        | scopes (beside mcp)            |
| ---------------------- | ----------------------------------- | ------------------------------ |
| list_accounts          | GET /accounts                       | read                           |
| list_capabilities      | GET /capabilities                   | read                           |
| validate_draft         | POST /publications/validate         | read                           |
| create_publication     | POST /publications                  | write (+ publish if scheduled) |
| list_publications      | GET /publications                   | read                           |
| get_publication        | GET /publications/{id}              | read                           |
| reschedule_publication | PATCH /publications/{id} (the time) | write (+ publish unless draft) |
| cancel_publication     | DELETE /publications/{id}           | write (+ publish unless draft) |
| retry_publication      | POST /publications/{id}/retry       | publish                        |
| queue_publication      | POST /publications/{id}/queue       | write, publish                 |
| list_queue_slots       | GET /queue-slots, /accounts/{id}/…  | read                           |
| set_queue_slots        | PUT (DELETE) …/queue-slots          | write                          |
| resolve_rendition      | POST /renditions/{id}/resolve       | publish                        |
| send_test_webhook      | POST /webhooks/{id}/test            | admin                          |
| list_comments          | GET /comments                       | read                           |
| get_comment_thread     | GET /comments/{id}                  | read                           |
| reply_to_comment       | POST /comments/{id}/reply           | publish                        |
| update_comment         | POST /comments/{id}/done, …/assign  | write                          |
| moderate_comment       | POST /comments/{id}/hide, …/delete  | publish                        |

Inputs go through the API's serializers and the same services; outputs are the API's
JSON. Another workspace's id is NOT_FOUND, as in the API. Refusals are tool errors whose
text (and structured content) is the API's envelope ``{"error": {code, message,
details}}``. Tools that write are refused in maintenance mode and for suspended
organizations, and every call counts against the token's API rate limit. What a tool does
is attributed to its token (and the person who made it) as an API call is: the audit log
records it with the client's address and an "MCP" user agent.

Tools are plain functions: the SDK runs them in worker threads, so the ORM is used as in
any synchronous view.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from types import SimpleNamespace
from typing import Annotated, Any, Literal

from django.db import close_old_connections
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import Field
from pydantic import ValidationError as ArgumentsError
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer

from apps.accounts.access import token_authorize
from apps.accounts.models import ApiToken, SocialAccount, User
from apps.api.errors import validation_details
from apps.api.mcp.auth import token_from_state
from apps.api.serializers.accounts import AccountSerializer
from apps.api.serializers.inbox import CommentFilterSerializer, CommentSerializer, ReplySerializer
from apps.api.serializers.publications import (
    PublicationCreateSerializer,
    PublicationFilterSerializer,
    PublicationSerializer,
)
from apps.api.serializers.queue import QueueSlotsReplaceSerializer, QueueSlotsSerializer
from apps.api.serializers.renditions import RenditionResolveSerializer
from apps.api.serializers.webhooks import WebhookDeliverySerializer
from apps.api.throttling import TokenRateThrottle
from apps.api.validation import publication_validate
from apps.api.views.analytics import analytics_shown, rendition_metrics_shown
from apps.api.views.inbox import comment_filters, comment_shown
from apps.api.views_queue import account_slots, default_slots
from apps.common.acting import acting_as
from apps.common.envelope import envelope
from apps.common.errors import DomainError, NotFound
from apps.inbox.models import Comment
from apps.inbox.selectors import comment_list
from apps.inbox.services import (
    comment_assign,
    comment_moderate,
    comment_set_state,
    reply_submit,
)
from apps.ops.services import maintenance_state
from apps.planning.services import publication_queue, queue_slots_replace, queue_slots_reset
from apps.providers.live.readiness import effective_capabilities, effective_capabilities_for
from apps.publications.models import Publication
from apps.publishing.selectors import publication_detail, with_publication_read
from apps.publishing.services import (
    publication_cancel,
    publication_create,
    publication_reschedule,
    publication_retry,
    rendition_resolve,
)
from apps.renditions.models import Rendition
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.services import webhook_send_test

# The SDK logs every stateless request at INFO; keep that out of the site's logs unless an
# operator configured this logger.
_transport_log = logging.getLogger("mcp.server.streamable_http")
if _transport_log.level == logging.NOTSET:
    _transport_log.setLevel(logging.WARNING)

MAX_ACCOUNTS = 500
MAX_LISTED = 100


class ApiServer(MCPServer):
    """The SDK's server, with the API's envelope for calls refused before a tool runs: an
    unknown tool (NOT_FOUND), an argument it does not take (UNKNOWN_FIELD, as the API
    refuses a field it does not know), arguments of the wrong shape (VALIDATION_ERROR, per
    argument). The SDK would answer those as plain text."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            return _result(
                envelope("NOT_FOUND", f"There is no tool named {name!r}.", {"tool": name}),
                is_error=True,
            )
        unknown = sorted(set(arguments) - set(tool.parameters.get("properties", {})))
        if unknown:
            details = {argument: ["Unknown argument."] for argument in unknown}
            return _result(
                envelope("UNKNOWN_FIELD", f"{name} does not take these arguments.", details),
                is_error=True,
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            refused = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(refused, ArgumentsError):
                raise
            return _result(
                envelope("VALIDATION_ERROR", "The arguments are not valid.", _details(refused)),
                is_error=True,
            )


def _details(refused: ArgumentsError) -> dict[str, list[str]]:
    """Pydantic's argument errors keyed by argument path, as the API keys field errors."""
    details: dict[str, list[str]] = {}
    for problem in refused.errors(include_url=False, include_input=False):
        path = ".".join(str(part) for part in problem["loc"]) or "non_field_errors"
        details.setdefault(path, []).append(f"{problem['msg']}.")
    return details


server = ApiServer(
    name="socialpost",
    instructions=(
        "Compose, validate, schedule and follow social media posts in one workspace. "
        "Call list_accounts for destination account ids and list_capabilities for each "
        "platform's limits; validate_draft reports every problem before create_publication; "
        "list_publications finds posts by status and time; get_publication shows what "
        "happened per destination; reschedule_publication and cancel_publication change "
        "what has not gone out; retry_publication resends failed destinations (never "
        "published ones). list_queue_slots and set_queue_slots manage the weekly posting "
        "slots; queue_publication puts a post in the next slot free for all its "
        "destinations; resolve_rendition settles a destination whose outcome is unknown, "
        "once you checked the platform."
    ),
)

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)


class MaintenanceRefusal(DomainError):
    """Maintenance mode: writes wait (the API answers 503 MAINTENANCE)."""

    code = "MAINTENANCE"
    http_status = 503


# --- plumbing -------------------------------------------------------------------------------


def _json(data: Any) -> Any:
    """Serializer output as plain JSON values (dates as the API writes them)."""
    return json.loads(JSONRenderer().render(data))


def _result(data: dict, *, is_error: bool = False) -> CallToolResult:
    text = json.dumps(data, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=data, is_error=is_error
    )


def _authorize(token: ApiToken, scopes: tuple[str, ...], *, writes: bool) -> None:
    """The API's rules for the endpoint this tool mirrors (one policy for both)."""
    token_authorize(token, scopes)
    throttle = TokenRateThrottle()
    if not throttle.allow_request(SimpleNamespace(auth=token), None):
        wait = max(1, math.ceil(throttle.wait() or 1))
        raise DomainError(
            "Too many requests for this token.",
            code="RATE_LIMITED",
            details={"retry_after_s": wait},
        )
    if writes:
        state = maintenance_state()
        if state.is_on:
            raise MaintenanceRefusal(state.message, details={"retry_after_s": state.retry_after_s})


def _run(
    ctx: Context,
    work: Callable[[ApiToken], dict],
    *,
    scopes: tuple[str, ...],
    writes: bool = False,
) -> CallToolResult:
    """Authorize, do the work, and answer the API's JSON or its error envelope."""
    request = ctx.request_context.request
    assert request is not None  # served over HTTP only: every call comes with its request
    token = token_from_state(request.state)
    close_old_connections()
    try:
        _authorize(token, scopes, writes=writes)
        with acting_as(token=token, **_client(request)):
            return _result(work(token))
    except DomainError as exc:
        return _result(envelope(exc.code, exc.message, exc.details), is_error=True)
    except ValidationError as exc:
        code, details = validation_details(exc.detail)
        return _result(envelope(code, "The request is not valid.", details), is_error=True)
    finally:
        close_old_connections()


def _client(request) -> dict:
    """Where the call came from, for the audit log (the peer, as for the site)."""
    headers = getattr(request, "headers", None) or {}
    client = getattr(request, "client", None)
    agent = headers.get("user-agent", "")
    return {
        "ip": client.host if client else None,
        "user_agent": f"MCP {agent}".strip(),
    }


def _publication(token: ApiToken, publication_id: int) -> Publication:
    try:
        return Publication.objects.for_workspace(token.workspace).get(pk=publication_id)
    except Publication.DoesNotExist:
        raise NotFound(
            "No publication with this id in this workspace.",
            details={"publication_id": publication_id},
        ) from None


def _authorize_change(token: ApiToken, publication: Publication) -> None:
    """The API's rule for changing a publication: a draft needs write; one that is
    scheduled (or went out) needs publish too, as it changes what goes out, or when."""
    if publication.status != Publication.Status.DRAFT:
        token_authorize(token, ("write", "publish"))


def _shown(publication: Publication | None) -> dict:
    """The publication as the API shows it (read by the one read, with all it shows)."""
    if publication is None:
        raise NotFound("No publication with this id in this workspace.")
    return _json(PublicationSerializer(publication).data)


def _rendered(publication: Publication) -> dict:
    """The publication as it is now, read again after a change."""
    return _shown(publication_detail(workspace_id=publication.workspace_id, pk=publication.pk))


def _body(**fields: Any) -> dict:
    """A POST /publications body from the tool's arguments (unset ones left out)."""
    return {name: value for name, value in fields.items() if value is not None}


def _parsed(body: dict) -> dict:
    serializer = PublicationCreateSerializer(data=body)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


# --- argument types (the API's fields; the serializers stay the judge) ----------------------

Text = Annotated[str | None, Field(description="Shorthand for one segment; give text or segments.")]
Segments = Annotated[
    list[dict[str, Any]] | None,
    Field(
        description='The posts in thread order: [{"text": "...", "media": [{"id": 1, '
        '"alt_text": "..."}]}]. Several segments make a thread.'
    ),
]
Destinations = Annotated[
    list[dict[str, Any]] | None,
    Field(
        description='Where to post: [{"account": <id from list_accounts>, "segments": '
        '[...optional own text...], "settings": {...}, "scheduled_at": "...optional..."}].'
    ),
]
ScheduledAt = Annotated[
    str | None, Field(description="An ISO-8601 instant with offset: 2027-03-28T09:00:00+02:00.")
]
LocalTime = Annotated[
    str | None,
    Field(description="A wall-clock time without offset (2027-03-28T09:00), read in timezone."),
]
Zone = Annotated[
    str | None, Field(description="An IANA zone, e.g. Europe/Warsaw (default: the workspace's).")
]
Status = Annotated[
    Literal["draft", "scheduled"],
    Field(description="draft, or scheduled (goes out at the time; needs the publish scope)."),
]
ReferenceKey = Annotated[
    str | None,
    Field(description="Your own key, unique in the workspace: a retried create cannot duplicate."),
]
FirstCommentText = Annotated[
    str | None,
    Field(
        description="Posted under each post once it is live, where the platform takes "
        "comments (see list_capabilities: first_comment)."
    ),
]
PublicationId = Annotated[int, Field(description="A publication id.", ge=1)]


# --- tools ----------------------------------------------------------------------------------


@server.tool(annotations=READ)
def list_accounts(ctx: Context) -> CallToolResult:
    """The workspace's destination accounts: id, platform, handle, status. Use the ids in
    `destinations`."""

    def work(token: ApiToken) -> dict:
        accounts = SocialAccount.objects.for_workspace(token.workspace).order_by("-id")
        return {"accounts": _json(AccountSerializer(accounts[:MAX_ACCOUNTS], many=True).data)}

    return _run(ctx, work, scopes=("read",))


@server.tool(annotations=READ)
def list_capabilities(
    ctx: Context,
    platform: Annotated[
        str | None, Field(description="One platform (e.g. mastodon); all when omitted.")
    ] = None,
) -> CallToolResult:
    """What each platform accepts (text limits and counting, media, threads, alt text,
    settings) and its readiness (experimental until proven against the live platform)."""

    def work(token: ApiToken) -> dict:
        if platform is not None:
            return {"platforms": [effective_capabilities_for(platform).as_dict()]}
        return {"platforms": [caps.as_dict() for caps in effective_capabilities().values()]}

    return _run(ctx, work, scopes=("read",))


@server.tool(annotations=READ)
def validate_draft(
    ctx: Context,
    text: Text = None,
    segments: Segments = None,
    destinations: Destinations = None,
    scheduled_at: ScheduledAt = None,
    local_time: LocalTime = None,
    timezone: Zone = None,
    status: Status = "draft",
    reference_key: ReferenceKey = None,
    first_comment: FirstCommentText = None,
) -> CallToolResult:
    """Check a publication without creating it: every problem (text too long for a
    platform, media it refuses, a time in the past, a taken reference key...) with its
    field path and machine code. Takes the same arguments as create_publication."""
    body = _body(
        text=text,
        segments=segments,
        destinations=destinations,
        scheduled_at=scheduled_at,
        local_time=local_time,
        timezone=timezone,
        status=status,
        reference_key=reference_key,
        first_comment=first_comment,
    )

    def work(token: ApiToken) -> dict:
        problems = publication_validate(token=token, data=_parsed(body))
        return {"valid": not problems, "problems": _json(problems)}

    return _run(ctx, work, scopes=("read",))


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=True))
def create_publication(
    ctx: Context,
    text: Text = None,
    segments: Segments = None,
    destinations: Destinations = None,
    scheduled_at: ScheduledAt = None,
    local_time: LocalTime = None,
    timezone: Zone = None,
    status: Status = "draft",
    reference_key: ReferenceKey = None,
    first_comment: FirstCommentText = None,
) -> CallToolResult:
    """Create a publication: a draft, or scheduled to go out at its time (now when no time
    is given). Answers the publication with one rendition per destination."""
    body = _body(
        text=text,
        segments=segments,
        destinations=destinations,
        scheduled_at=scheduled_at,
        local_time=local_time,
        timezone=timezone,
        status=status,
        reference_key=reference_key,
        first_comment=first_comment,
    )
    scopes = ("write", "publish") if status == Publication.Status.SCHEDULED else ("write",)

    def work(token: ApiToken) -> dict:
        publication = publication_create(
            workspace=token.workspace, author=token.created_by, **_parsed(body)
        )
        return _rendered(publication)

    return _run(ctx, work, scopes=scopes, writes=True)


@server.tool(annotations=READ)
def get_publication(
    ctx: Context,
    publication_id: Annotated[int | None, Field(description="A publication id.", ge=1)] = None,
    reference_key: Annotated[
        str | None, Field(description="Or find it by the reference key it was created with.")
    ] = None,
) -> CallToolResult:
    """A publication and, per destination, its status, provider URL, attempts, next retry,
    whether the outcome is ambiguous, and the error (kind, code, action to take)."""

    def work(token: ApiToken) -> dict:
        if (publication_id is None) == (reference_key is None):
            raise DomainError(
                "Give publication_id or reference_key (one of them).",
                code="VALIDATION_ERROR",
                details={"publication_id": ["Give publication_id or reference_key."]},
            )
        if publication_id is not None:
            found = publication_detail(workspace_id=token.workspace_id, pk=publication_id)
            if found is None:
                raise NotFound(
                    "No publication with this id in this workspace.",
                    details={"publication_id": publication_id},
                )
            return _shown(found)
        by_key = with_publication_read(
            Publication.objects.for_workspace(token.workspace).filter(reference_key=reference_key)
        )
        listed = list(by_key[:1])
        if not listed:
            raise NotFound("No publication with this reference key in this workspace.")
        return _shown(listed[0])

    return _run(ctx, work, scopes=("read",))


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=True))
def retry_publication(ctx: Context, publication_id: PublicationId) -> CallToolResult:
    """Send the failed destinations of a publication again now (at most 6 manual retries
    each). Published destinations are never sent again; an ambiguous one must be resolved
    by a person first."""

    def work(token: ApiToken) -> dict:
        publication = _publication(token, publication_id)
        publication_retry(publication=publication, user=token.created_by)
        return _rendered(publication)

    return _run(ctx, work, scopes=("publish",), writes=True)


@server.tool(annotations=READ)
def list_publications(
    ctx: Context,
    status: Annotated[
        str | None,
        Field(description="One status or several, comma-separated (e.g. scheduled,failed)."),
    ] = None,
    scheduled_after: Annotated[
        str | None, Field(description="Scheduled at or after this ISO-8601 instant.")
    ] = None,
    scheduled_before: Annotated[
        str | None, Field(description="Scheduled before this ISO-8601 instant.")
    ] = None,
    limit: Annotated[int, Field(description="How many, newest first.", ge=1, le=MAX_LISTED)] = 20,
) -> CallToolResult:
    """The workspace's publications, newest first, each with what happened per
    destination. Filters as GET /publications."""
    query = _body(status=status, scheduled_after=scheduled_after, scheduled_before=scheduled_before)

    def work(token: ApiToken) -> dict:
        parsed = PublicationFilterSerializer(data=query)
        parsed.is_valid(raise_exception=True)
        filters = parsed.validated_data
        found = with_publication_read(Publication.objects.for_workspace(token.workspace))
        if "status" in filters:
            found = found.filter(status__in=filters["status"])
        if "scheduled_after" in filters:
            found = found.filter(scheduled_at__gte=filters["scheduled_after"])
        if "scheduled_before" in filters:
            found = found.filter(scheduled_at__lt=filters["scheduled_before"])
        page = list(found.order_by("-id")[: limit + 1])
        return {
            "publications": _json(PublicationSerializer(page[:limit], many=True).data),
            "has_more": len(page) > limit,
        }

    return _run(ctx, work, scopes=("read",))


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=True))
def reschedule_publication(
    ctx: Context,
    publication_id: PublicationId,
    revision: Annotated[
        int, Field(description="The revision you read (get_publication); stale is refused.", ge=1)
    ],
    scheduled_at: ScheduledAt = None,
    local_time: LocalTime = None,
    timezone: Zone = None,
) -> CallToolResult:
    """Move a publication's time. Destinations that follow it move with it; those that
    went out, are in flight or failed keep theirs. A stale revision is REVISION_CONFLICT:
    read the publication again and decide again."""

    def work(token: ApiToken) -> dict:
        publication = _publication(token, publication_id)
        _authorize_change(token, publication)
        moved = publication_reschedule(
            publication=publication,
            expected_revision=revision,
            scheduled_at=scheduled_at,
            local_time=local_time,
            timezone=timezone,
            actor=token.created_by,
        )
        return _rendered(moved)

    return _run(ctx, work, scopes=("write",), writes=True)


@server.tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True))
def cancel_publication(ctx: Context, publication_id: PublicationId) -> CallToolResult:
    """Cancel every destination that has not gone out. Published ones stay on their
    platforms; ones in flight finish; an ambiguous one waits to be resolved."""

    def work(token: ApiToken) -> dict:
        publication = _publication(token, publication_id)
        _authorize_change(token, publication)
        return _rendered(publication_cancel(publication=publication))

    return _run(ctx, work, scopes=("write",), writes=True)


# --- the queue and settling ambiguous outcomes ---------------------------------------------

AccountId = Annotated[
    int | None,
    Field(description="An account id (list_accounts); omitted: the workspace's default slots."),
]


def _account(token: ApiToken, account_id: int) -> SocialAccount:
    try:
        return SocialAccount.objects.for_workspace(token.workspace).get(pk=account_id)
    except SocialAccount.DoesNotExist:
        raise NotFound(
            "No account with this id in this workspace.", details={"account_id": account_id}
        ) from None


def _slots_shown(token: ApiToken, account_id: int | None) -> dict:
    shown = (
        default_slots(token.workspace)
        if account_id is None
        else account_slots(_account(token, account_id))
    )
    return _json(QueueSlotsSerializer(shown).data)


@server.tool(annotations=READ)
def list_queue_slots(ctx: Context, account_id: AccountId = None) -> CallToolResult:
    """The weekly posting slots in force: the workspace's default, or one account's (its
    own, or the default it follows: `source`), with their zone and a readable description."""
    return _run(ctx, lambda token: _slots_shown(token, account_id), scopes=("read",))


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
def set_queue_slots(
    ctx: Context,
    slots: Annotated[
        list[dict[str, Any]] | None,
        Field(description='Exactly these slots: [{"weekday": "mon", "time": "09:30"}, ...].'),
    ] = None,
    timezone: Annotated[
        str, Field(description="An IANA zone for the times; blank: the workspace's.")
    ] = "",
    account_id: AccountId = None,
    follow_workspace: Annotated[
        bool,
        Field(description="With account_id: drop the account's own slots and follow the default."),
    ] = False,
) -> CallToolResult:
    """Replace the workspace's default slots, or give an account slots of its own (an empty
    list: nothing can be queued for it). Posts already queued keep their times."""

    def work(token: ApiToken) -> dict:
        if follow_workspace:
            if account_id is None or slots is not None:
                raise DomainError(
                    "follow_workspace needs account_id and no slots.",
                    code="VALIDATION_ERROR",
                    details={"follow_workspace": ["Give account_id, and no slots."]},
                )
            queue_slots_reset(account=_account(token, account_id))
            return _slots_shown(token, account_id)
        parsed = QueueSlotsReplaceSerializer(data={"slots": slots, "timezone": timezone})
        parsed.is_valid(raise_exception=True)
        account = None if account_id is None else _account(token, account_id)
        queue_slots_replace(
            workspace=token.workspace,
            account=account,
            slots=parsed.validated_data["slots"],
            timezone=parsed.validated_data["timezone"],
        )
        return _slots_shown(token, account_id)

    return _run(ctx, work, scopes=("write",), writes=True)


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=True))
def queue_publication(
    ctx: Context,
    publication_id: PublicationId,
    revision: Annotated[
        int, Field(description="The revision you read (get_publication); stale is refused.", ge=1)
    ],
) -> CallToolResult:
    """Schedule a draft (or move a scheduled post) to the earliest posting slot free for
    every one of its destinations, within each platform's daily cap."""

    def work(token: ApiToken) -> dict:
        publication = publication_queue(
            publication=_publication(token, publication_id),
            expected_revision=revision,
            actor=token.created_by,
        )
        return _rendered(publication)

    return _run(ctx, work, scopes=("write", "publish"), writes=True)


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=True))
def resolve_rendition(
    ctx: Context,
    rendition_id: Annotated[
        int, Field(description="A destination's id (renditions[].id in get_publication).", ge=1)
    ],
    outcome: Annotated[
        Literal["published", "failed", "retry"],
        Field(
            description="After checking the platform: published (give provider_url or "
            "provider_post_id), failed (there is no post; leave it failed) or retry (there "
            "is no post; send it again)."
        ),
    ],
    provider_url: Annotated[str | None, Field(description="The post's URL.")] = None,
    provider_post_id: Annotated[str | None, Field(description="The post's id.")] = None,
) -> CallToolResult:
    """Settle a destination whose outcome is unknown (the request may have reached the
    platform). Recorded as a delivery attempt and in the audit log."""
    body = _body(outcome=outcome, provider_url=provider_url, provider_post_id=provider_post_id)

    def work(token: ApiToken) -> dict:
        try:
            rendition = Rendition.objects.for_workspace(token.workspace).get(pk=rendition_id)
        except Rendition.DoesNotExist:
            raise NotFound(
                "No destination with this id in this workspace.",
                details={"rendition_id": rendition_id},
            ) from None
        parsed = RenditionResolveSerializer(data=body)
        parsed.is_valid(raise_exception=True)
        rendition_resolve(rendition=rendition, user=token.created_by, **parsed.validated_data)
        return _rendered(rendition.publication)

    return _run(ctx, work, scopes=("publish",), writes=True)


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=True))
def send_test_webhook(
    ctx: Context,
    webhook_id: Annotated[int, Field(description="A webhook endpoint's id.", ge=1)],
) -> CallToolResult:
    """Send a `webhook.test` event to one webhook endpoint, signed and recorded in its
    delivery log like any event; answers the new delivery (pending)."""

    def work(token: ApiToken) -> dict:
        endpoints = WebhookEndpoint.objects.for_workspace(token.workspace)
        try:
            endpoint = endpoints.get(pk=webhook_id)
        except WebhookEndpoint.DoesNotExist:
            raise NotFound(
                "No webhook endpoint with this id in this workspace.",
                details={"webhook_id": webhook_id},
            ) from None
        sent = webhook_send_test(endpoint=endpoint)
        delivery = WebhookDelivery.objects.select_related("event").get(pk=sent.pk)
        return _json(WebhookDeliverySerializer(delivery).data)

    return _run(ctx, work, scopes=("admin",), writes=True)


@server.tool(annotations=READ)
def get_analytics(
    ctx: Context,
    rendition_id: Annotated[
        int | None, Field(description="One destination: its metrics over time.", ge=1)
    ] = None,
    date_from: Annotated[
        str | None,
        Field(description="First day (YYYY-MM-DD, workspace zone); default 30 days back."),
    ] = None,
    date_to: Annotated[
        str | None, Field(description="Last day (YYYY-MM-DD); default today.")
    ] = None,
    accounts: Annotated[
        list[int] | None, Field(description="Account ids; default every account.")
    ] = None,
) -> CallToolResult:
    """Post metrics read from the platforms over time. With rendition_id: that destination's
    latest counts, every sample, and per metric whether the platform offers it (and why not:
    a metric not offered is null, never 0). Without: the period's totals, top posts,
    followers over time, engagement by weekday and hour, and the best posting times."""

    def work(token: ApiToken) -> dict:
        if rendition_id is not None:
            return _json(rendition_metrics_shown(token.workspace, rendition_id))
        query: dict = {"from": date_from, "to": date_to, "account": accounts}
        return _json(analytics_shown(token.workspace, {k: v for k, v in query.items() if v}))

    return _run(ctx, work, scopes=("read",))


# --- the inbox ------------------------------------------------------------------------------

CommentId = Annotated[int, Field(description="A comment's id (from list_comments).", ge=1)]


def _comment(token: ApiToken, comment_id: int) -> Comment:
    try:
        return Comment.objects.for_workspace(token.workspace).get(pk=comment_id, is_deleted=False)
    except Comment.DoesNotExist:
        raise NotFound(
            "No comment with this id in this workspace.", details={"comment_id": comment_id}
        ) from None


@server.tool(annotations=READ)
def list_comments(
    ctx: Context,
    account: Annotated[int | None, Field(description="A connected account's id.", ge=1)] = None,
    platform: Annotated[str | None, Field(description="e.g. mastodon, youtube.")] = None,
    unanswered: Annotated[bool | None, Field(description="Only comments not answered.")] = None,
    assigned: Annotated[
        Literal["me"] | None, Field(description="me: assigned to the token's maker.")
    ] = None,
    state: Annotated[
        Literal["open", "done", "all"] | None, Field(description="Default: open.")
    ] = None,
) -> CallToolResult:
    """Comments under the workspace's posts, newest first (at most 100): others' comments,
    open ones unless `state` says otherwise."""
    query = _body(
        account=account, platform=platform, unanswered=unanswered, assigned=assigned, state=state
    )

    def work(token: ApiToken) -> dict:
        parsed = CommentFilterSerializer(data=query)
        parsed.is_valid(raise_exception=True)
        filters = comment_filters(dict(parsed.validated_data), token.created_by)
        comments = comment_list(token.workspace, filters)[:MAX_LISTED]
        return {"comments": _json(CommentSerializer(comments, many=True).data)}

    return _run(ctx, work, scopes=("read",))


@server.tool(annotations=READ)
def get_comment_thread(ctx: Context, comment_id: CommentId) -> CallToolResult:
    """A comment, what its platform allows (reply, hide, delete, and why not), and every
    comment and inbox reply under the same post, oldest first."""
    return _run(
        ctx, lambda token: _json(comment_shown(_comment(token, comment_id))), scopes=("read",)
    )


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=True))
def reply_to_comment(
    ctx: Context,
    comment_id: CommentId,
    text: Annotated[str, Field(description="The reply.", min_length=1, max_length=10000)],
) -> CallToolResult:
    """Reply to a comment on its platform. Sent by a job that never sends twice; held for
    an admin's approval where the workspace asks for it (status awaiting_approval)."""

    def work(token: ApiToken) -> dict:
        reply = reply_submit(
            comment=_comment(token, comment_id), author=token.created_by, text=text
        )
        return _json(ReplySerializer(reply).data)

    return _run(ctx, work, scopes=("publish",), writes=True)


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
def update_comment(
    ctx: Context,
    comment_id: CommentId,
    done: Annotated[bool | None, Field(description="Mark done (true) or open (false).")] = None,
    assignee: Annotated[
        int | None, Field(description="A member's user id; 0 assigns it to nobody.", ge=0)
    ] = None,
) -> CallToolResult:
    """Mark a comment done or open, and/or assign it to a member of the workspace."""

    def work(token: ApiToken) -> dict:
        comment = _comment(token, comment_id)
        if done is not None:
            comment = comment_set_state(comment=comment, done=done)
        if assignee is not None:
            person = User.objects.filter(pk=assignee).first() if assignee else None
            if assignee and person is None:
                raise NotFound("No such member.", details={"assignee": assignee})
            comment = comment_assign(comment=comment, assignee=person)
        return _json(comment_shown(comment))

    return _run(ctx, work, scopes=("write",), writes=True)


@server.tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True))
def moderate_comment(
    ctx: Context,
    comment_id: CommentId,
    action: Annotated[
        Literal["hide", "unhide", "delete"],
        Field(description="On the platform, where it allows it (get_comment_thread: allows)."),
    ],
) -> CallToolResult:
    """Hide, show again or delete a comment on its platform (done by a job); refused with
    INBOX_ACTION_UNAVAILABLE where the platform does not allow it."""

    def work(token: ApiToken) -> dict:
        comment = _comment(token, comment_id)
        comment_moderate(comment=comment, action=action)
        return _json(comment_shown(comment))

    return _run(ctx, work, scopes=("publish",), writes=True)
