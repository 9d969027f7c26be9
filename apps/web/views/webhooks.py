"""A workspace's webhook endpoints: register one (its secret is shown once), switch it on
or off, rotate its secret, delete it, and read its delivery log with redelivery."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from apps.accounts.permissions import Action
from apps.common.errors import DomainError
from apps.web.access import WorkspaceRequest, post_only, workspace_view
from apps.webhooks.constants import EVENT_TYPES
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.services import (
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_rotate_secret,
    webhook_endpoint_update,
    webhook_redeliver,
    webhook_send_test,
)

DELIVERIES_SHOWN = 50


class WebhookEndpointForm(forms.Form):
    url = forms.CharField(
        label="URL",
        max_length=2000,
        help_text="https:// on a public address (a local install with DEBUG on may use "
        "http:// to this machine or its network). Each event is POSTed there, signed.",
        widget=forms.URLInput(attrs={"placeholder": "https://example.com/hooks/social"}),
    )
    description = forms.CharField(label="Description", max_length=200, required=False)
    event_types = forms.MultipleChoiceField(
        label="Events",
        choices=[(name, name) for name in EVENT_TYPES],
        initial=list(EVENT_TYPES),
        widget=forms.CheckboxSelectMultiple,
    )


def _endpoints(request: WorkspaceRequest):
    return WebhookEndpoint.objects.for_workspace(request.workspace).order_by("-id")


def _render_list(
    request: WorkspaceRequest,
    *,
    form: WebhookEndpointForm | None = None,
    secret: str | None = None,
    created: WebhookEndpoint | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "workspace": request.workspace,
        "section": "webhooks",
        "endpoints": _endpoints(request),
        "form": form or WebhookEndpointForm(),
        "secret": secret,
        "created": created,
    }
    response = render(request, "web/webhooks/list.html", context, status=status)
    if secret is not None:
        response["Cache-Control"] = "no-store"  # the secret must not sit in a cache
    return response


@workspace_view(Action.ADMIN)
@require_GET
def webhook_list(request: WorkspaceRequest) -> HttpResponse:
    return _render_list(request)


@workspace_view(Action.ADMIN)
@post_only("webhooks")
def webhook_create(request: WorkspaceRequest) -> HttpResponse:
    form = WebhookEndpointForm(request.POST)
    if form.is_valid():
        try:
            endpoint, secret = webhook_endpoint_create(
                workspace=request.workspace,
                url=form.cleaned_data["url"],
                event_types=form.cleaned_data["event_types"],
                description=form.cleaned_data["description"],
                created_by=request.user,
            )
        except DomainError as exc:
            field = "url" if "url" in exc.details else None
            form.add_error(field, exc.message)
        else:
            # Rendered, not redirected: the clear secret exists only in this response.
            return _render_list(request, secret=secret, created=endpoint, status=201)
    return _render_list(request, form=form, status=400)


@workspace_view(Action.ADMIN)
@require_GET
def webhook_detail(request: WorkspaceRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(_endpoints(request), pk=pk)
    deliveries = (
        WebhookDelivery.objects.for_workspace(request.workspace)
        .filter(endpoint=endpoint)
        .select_related("event")
        .order_by("-id")[:DELIVERIES_SHOWN]
    )
    context = {
        "workspace": request.workspace,
        "section": "webhooks",
        "endpoint": endpoint,
        "deliveries": deliveries,
        "shown": DELIVERIES_SHOWN,
        "held": _held(endpoint),
    }
    return render(request, "web/webhooks/detail.html", context)


def _held(endpoint: WebhookEndpoint) -> int:
    """Events kept while the endpoint is switched off (sent when it is switched on)."""
    return endpoint.deliveries.filter(status=WebhookDelivery.Status.HELD).count()


def _back(request: WorkspaceRequest, endpoint: WebhookEndpoint | None = None) -> HttpResponse:
    if endpoint is not None:
        return redirect("webhook-detail", workspace_slug=request.workspace.slug, pk=endpoint.pk)
    return redirect("webhooks", workspace_slug=request.workspace.slug)


@workspace_view(Action.ADMIN)
@post_only("webhook-detail", "pk")
def webhook_toggle(request: WorkspaceRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(_endpoints(request), pk=pk)
    held = 0 if endpoint.is_active else _held(endpoint)
    try:
        endpoint = webhook_endpoint_update(endpoint=endpoint, is_active=not endpoint.is_active)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _switched(endpoint, held))
    return _back(request, endpoint)


def _switched(endpoint: WebhookEndpoint, held: int) -> str:
    if not endpoint.is_active:
        return f"Switched off: {endpoint.url}. Its events are kept until it is on again."
    sent = f" Sending the {held} event{'s' if held != 1 else ''} it kept." if held else ""
    return f"Switched on: {endpoint.url}.{sent}"


@workspace_view(Action.ADMIN)
@post_only("webhook-detail", "pk")
def webhook_rotate(request: WorkspaceRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(_endpoints(request), pk=pk)
    secret = webhook_endpoint_rotate_secret(endpoint=endpoint)
    return _render_list(request, secret=secret, created=endpoint)


@workspace_view(Action.ADMIN)
@post_only("webhook-detail", "pk")
def webhook_delete(request: WorkspaceRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(_endpoints(request), pk=pk)
    webhook_endpoint_delete(endpoint=endpoint)
    messages.success(request, f"Deleted the endpoint {endpoint.url}.")
    return _back(request)


@workspace_view(Action.ADMIN)
@post_only("webhook-detail", "pk")
def webhook_redeliver_view(request: WorkspaceRequest, pk: int, delivery_pk: int) -> HttpResponse:
    endpoint = get_object_or_404(_endpoints(request), pk=pk)
    delivery = get_object_or_404(
        WebhookDelivery.objects.for_workspace(request.workspace).filter(endpoint=endpoint),
        pk=delivery_pk,
    )
    try:
        webhook_redeliver(delivery=delivery)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Queued {delivery.event.type} for delivery again.")
    return _back(request, endpoint)


@workspace_view(Action.ADMIN)
@post_only("webhook-detail", "pk")
def webhook_send_test_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(_endpoints(request), pk=pk)
    try:
        delivery = webhook_send_test(endpoint=endpoint)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request,
            f"Sending a webhook.test event ({delivery.event.event_id}); its answer appears "
            "in the log below.",
        )
    return _back(request, endpoint)
