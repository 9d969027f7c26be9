"""What the tenant-isolation walk needs: every API operation read from the OpenAPI schema,
one object of each resource type in a workspace, the mapping from a path parameter to the
object it names, and a snapshot of everything a workspace owns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time, timedelta

from django.apps import apps
from django.db.models import Model
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator

from apps.accounts import services as account_services
from apps.accounts.models import Workspace
from apps.publications.models import Publication
from apps.renditions.models import normalize_error
from apps.series.services import series_create
from apps.webhooks.models import WebhookDelivery
from apps.webhooks.services import webhook_emit, webhook_endpoint_create
from tests.factories import (
    MediaAssetFactory,
    PublicationFactory,
    PublicationSegmentFactory,
    RenditionFactory,
    RenditionSegmentFactory,
    SocialAccountFactory,
)

HTTP_METHODS = ("get", "post", "put", "patch", "delete")
PARAMETER = re.compile(r"\{(\w+)\}")

# The object a path parameter names, by the collection segment right before it:
# /webhooks/{id}/deliveries/{delivery_id} names a webhook endpoint, then a delivery.
OBJECT_BY_COLLECTION = {
    "accounts": "account",
    "media": "media",
    "publications": "publication",
    "renditions": "rendition",
    "reviews": "review",
    "series": "series",
    "evergreen": "evergreen",
    "tokens": "token",
    "webhooks": "webhook_endpoint",
    "deliveries": "webhook_delivery",
    "portal-links": "portal_link",
    "comments": "comment",
    "replies": "reply",
}


@dataclass(frozen=True)
class Operation:
    """One method on one path of the API, as the OpenAPI schema lists it."""

    operation_id: str
    method: str
    path: str  # the schema's template: /api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver
    multipart: bool

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(PARAMETER.findall(self.path))

    def object_kind(self, parameter: str) -> str | None:
        """The fixture object the parameter names, or None when no mapping knows it."""
        segments = self.path.split("/")
        before = segments[segments.index("{" + parameter + "}") - 1]
        return OBJECT_BY_COLLECTION.get(before)

    def url(self, ids: dict[str, int]) -> str:
        return PARAMETER.sub(lambda match: str(ids[match.group(1)]), self.path)


# `socialpost login`'s two calls, made before the command has a token (no workspace, no
# scope; tests/api/test_cli_login.py walks them).
TOKENLESS_PATHS = frozenset({"/api/v1/cli/login", "/api/v1/cli/login/token"})


def api_operations() -> list[Operation]:
    """Every operation of the API's schema (what /api/schema/ serves) that takes a token."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = []
    for path, item in schema["paths"].items():
        if path in TOKENLESS_PATHS:
            continue
        for method in HTTP_METHODS:
            if method not in item:
                continue
            content = item[method].get("requestBody", {}).get("content", {})
            operations.append(
                Operation(
                    operation_id=item[method]["operationId"],
                    method=method,
                    path=path,
                    multipart=bool(content) and "application/json" not in content,
                )
            )
    return operations


def workspace_objects(workspace: Workspace) -> dict[str, Model]:
    """One object of each kind in `workspace`, each in a state where every operation on it
    can succeed: a failed publication with an ambiguous rendition (resolve) and a clean
    failure (retry), an active series, a finished webhook delivery (redeliver)."""
    account = SocialAccountFactory(workspace=workspace, platform="sandbox")
    publication = PublicationFactory(workspace=workspace, status="failed")
    rendition = RenditionFactory(
        publication=publication,
        social_account=account,
        status="failed",
        ambiguous=True,
        last_error=normalize_error({"kind": "timeout_after_send", "message": "No answer."}),
    )
    RenditionFactory(
        publication=publication,
        status="failed",
        last_error=normalize_error({"kind": "content_rejected", "message": "No."}),
    )
    tomorrow = timezone.now() + timedelta(days=1)
    series = series_create(
        workspace=workspace,
        name="Daily",
        template={"segments": [{"text": "Daily"}], "destinations": [{"account": account.pk}]},
        rrule="FREQ=DAILY",
        dtstart=tomorrow.strftime("%Y-%m-%dT09:00"),
        timezone="UTC",
    )
    # An IP literal needs no name resolution; it is a public address.
    endpoint, _secret = webhook_endpoint_create(
        workspace=workspace, url="https://93.184.215.14/hooks"
    )
    webhook_emit(workspace=workspace, event="rendition.failed", data={})
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status=WebhookDelivery.Status.FAILED)
    token = account_services.api_token_create(
        workspace=workspace, name="other", scopes=["read"]
    ).token
    comment = _comment(rendition)
    return {
        "account": account,
        "comment": comment,
        "reply": _held_reply(comment),
        "review": _in_review(workspace, account, tomorrow),
        "media": MediaAssetFactory(workspace=workspace),
        "publication": publication,
        "rendition": rendition,
        "series": series,
        "token": token,
        "webhook_endpoint": endpoint,
        "webhook_delivery": delivery,
        "portal_link": _portal_link(workspace),
        "evergreen": _evergreen(workspace, publication),
    }


def _evergreen(workspace: Workspace, publication: Publication) -> Model:
    """The publication marked evergreen (active: it can be paused, skipped, stopped)."""
    from apps.planning.evergreen import EvergreenSettings, evergreen_mark

    return evergreen_mark(
        workspace=workspace,
        publications=[publication],
        actor=None,
        settings=EvergreenSettings(),
    )[0]


def _comment(rendition) -> Model:
    """Someone's comment under the rendition's post, on a platform whose API allows every
    inbox action (the actions only enqueue their jobs)."""
    from apps.inbox.models import Comment

    return Comment.objects.create(
        workspace_id=rendition.workspace_id,
        rendition=rendition,
        social_account_id=rendition.social_account_id,
        platform="facebook",
        platform_id=f"c-{rendition.pk}",
        author_name="Ann",
        text="When do you open?",
        commented_at=timezone.now(),
    )


def _held_reply(comment) -> Model:
    from apps.inbox.models import Reply

    return Reply.objects.create(
        workspace_id=comment.workspace_id, comment=comment, text="At 7", status="awaiting_approval"
    )


def prepare_failed_reply(objects: dict[str, Model], status: str = "failed") -> None:
    """The reply failed (retry), or its outcome is unknown (mark sent)."""
    from apps.inbox.models import Reply

    Reply.objects.filter(pk=objects["reply"].pk).update(status=status)


def _in_review(workspace: Workspace, account, when) -> Model:
    """A draft waiting for approval (the publication a /reviews/{id} path names)."""
    from apps.approvals.models import Review
    from apps.publishing.services import publication_create

    draft = publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": "For review"}],
        destinations=[{"account": account.pk}],
        scheduled_at=when,
    )
    Review.objects.create(
        publication=draft, workspace=workspace, state="in_review", requested_at=timezone.now()
    )
    return draft


def _portal_link(workspace: Workspace) -> Model:
    """A client link (made directly: its token is of no use to the walk)."""
    from apps.approvals.models import PortalLink

    return PortalLink.objects.create(
        workspace=workspace,
        label="Client",
        secret_hash=f"walk-{workspace.pk}",
        expires_at=timezone.now() + timedelta(days=7),
    )


def prepare_first_comment(objects: dict[str, Model], status: str) -> None:
    """The rendition's first comment, in the status its operation settles."""
    from apps.renditions.models import FirstComment

    rendition = objects["rendition"]
    FirstComment.objects.create(
        rendition=rendition, workspace_id=rendition.workspace_id, text="Hi", status=status
    )


def prepare_resubmittable(objects: dict[str, Model]) -> None:
    """The review sent back with changes requested, so that submitting again can succeed."""
    from apps.approvals.models import Review

    Review.objects.filter(publication=objects["review"]).update(state="changes_requested")


def prepare_queueable(objects: dict[str, Model]) -> None:
    """The publication as a draft with draft destinations, and the workspace with a posting
    slot, so that adding it to the queue can succeed."""
    from apps.planning.services import queue_slots_replace
    from apps.publications.models import Publication
    from apps.renditions.models import Rendition

    publication = objects["publication"]
    PublicationSegmentFactory(publication=publication, text="Queued")
    for rendition in Rendition.objects.filter(publication=publication):
        RenditionSegmentFactory(rendition=rendition, text="Queued")
    Rendition.objects.filter(publication=publication).update(
        status="draft", ambiguous=False, last_error=None
    )
    Publication.objects.filter(pk=publication.pk).update(status="draft")
    queue_slots_replace(workspace=publication.workspace, slots=[(0, time(9))])


def workspace_snapshot(workspace: Workspace) -> dict[str, list[dict]]:
    """Every row of every model with a workspace, for that workspace: what an outsider's
    write must leave exactly as it was."""
    return {
        model._meta.label: list(
            model._default_manager.filter(workspace=workspace).order_by("pk").values()
        )
        for model in apps.get_models()
        if any(field.name == "workspace" for field in model._meta.fields)
    }
