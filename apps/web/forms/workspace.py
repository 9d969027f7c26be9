"""Forms of workspace pages: sandbox accounts, API tokens, post filters, reschedule and
resolving an unknown outcome."""

from __future__ import annotations

from django import forms

from apps.accounts.models import ApiToken
from apps.publications.models import Publication
from apps.publishing.services import Resolution
from apps.sandbox.behaviour import BEHAVIOUR_KEYS


class SandboxConnectForm(forms.Form):
    """A sandbox account and how it should misbehave (the demo's failure modes)."""

    handle = forms.CharField(
        label="Handle", max_length=100, help_text="Any name, e.g. demo-news. No spaces."
    )
    text_limit = forms.IntegerField(
        required=False,
        label="Text limit",
        min_value=1,
        initial=500,
        help_text="Longest text it accepts.",
    )
    reject_content = forms.BooleanField(label="Reject every post (a content error)", required=False)
    expired_token = forms.BooleanField(label="Expired token (needs reconnecting)", required=False)
    honours_idempotency_key = forms.BooleanField(
        label="Honours idempotency keys", required=False, initial=True
    )
    server_error_times = forms.IntegerField(
        required=False,
        label="Server errors first",
        min_value=0,
        initial=0,
        help_text="Answer 503 that many times.",
    )
    rate_limit_times = forms.IntegerField(
        required=False,
        label="Rate limits first",
        min_value=0,
        initial=0,
        help_text="Answer 429 that many times.",
    )
    retry_after_s = forms.IntegerField(
        required=False,
        label="Retry-After (seconds)",
        min_value=0,
        initial=1,
        help_text="Sent with those 429s.",
    )
    hang_after_accept_times = forms.IntegerField(
        required=False,
        label="Hang after accepting",
        min_value=0,
        initial=0,
        help_text="Store the post, then answer too late, that many times.",
    )
    latency_ms = forms.IntegerField(required=False, label="Latency (ms)", min_value=0, initial=0)

    def behaviour(self) -> dict:
        return {
            name: value
            for name, value in self.cleaned_data.items()
            if name in BEHAVIOUR_KEYS and value is not None
        }


class TokenCreateForm(forms.Form):
    name = forms.CharField(label="Name", max_length=100, help_text="What uses it, e.g. CI.")
    scopes = forms.MultipleChoiceField(
        label="Scopes",
        choices=[
            (ApiToken.Scope.READ, "read: see posts, accounts and their status"),
            (ApiToken.Scope.WRITE, "write: drafts, edits and uploads"),
            (ApiToken.Scope.PUBLISH, "publish: schedule, retry and resolve"),
            (ApiToken.Scope.ADMIN, "admin: tokens, webhooks and connected accounts"),
            (ApiToken.Scope.MCP, "mcp: assistants through the MCP server"),
        ],
        initial=["read", "write", "publish"],
        widget=forms.CheckboxSelectMultiple,
    )


class PublicationFilterForm(forms.Form):
    status = forms.ChoiceField(
        label="Status", required=False, choices=[("", "Any status"), *Publication.Status.choices]
    )
    start = forms.DateField(
        label="From",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
    )
    end = forms.DateField(
        label="To",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
    )

    def clean(self) -> dict:
        super().clean()
        cleaned = self.cleaned_data
        start, end = cleaned.get("start"), cleaned.get("end")
        if start and end and end < start:
            self.add_error("end", "The end is before the start.")
        return cleaned


class RescheduleForm(forms.Form):
    date = forms.DateField(
        label="Date",
        widget=forms.DateInput(attrs={"type": "date", "autofocus": True}, format="%Y-%m-%d"),
    )
    time = forms.TimeField(
        label="Time", widget=forms.TimeInput(attrs={"type": "time"}, format="%H:%M")
    )
    revision = forms.IntegerField(widget=forms.HiddenInput)


class ResolveForm(forms.Form):
    outcome = forms.ChoiceField(
        label="What did you find on the platform?",
        choices=[
            (Resolution.PUBLISHED, "It was published: record its link"),
            (Resolution.FAILED, "It is not there: leave it failed"),
            (Resolution.RETRY, "It is not there: send it again"),
        ],
        widget=forms.RadioSelect,
    )
    provider_url = forms.URLField(
        label="Link to the post", required=False, assume_scheme="https", max_length=1000
    )

    def clean(self) -> dict:
        super().clean()
        cleaned = self.cleaned_data
        if cleaned.get("outcome") == Resolution.PUBLISHED and not cleaned.get("provider_url"):
            self.add_error("provider_url", "Give the post's link when it was published.")
        return cleaned
