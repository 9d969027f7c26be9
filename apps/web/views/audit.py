"""The organization's security log: sign-ins, members, tokens, accounts, webhooks and
resolved deliveries, for its owners and admins."""

from __future__ import annotations

from django import forms
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from apps.accounts.http import AuthenticatedRequest
from apps.accounts.models import Organization, User
from apps.audit.actions import LABELS
from apps.audit.selectors import audit_events_for
from apps.web.access import organization_for, user_view

PAGE_SIZE = 50


class SecurityLogFilterForm(forms.Form):
    action = forms.ChoiceField(required=False, label="Action")
    person = forms.ModelChoiceField(
        queryset=User.objects.none(), required=False, label="Person", empty_label="Anyone"
    )

    def __init__(self, *args, organization: Organization, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        action = self.fields["action"]
        assert isinstance(action, forms.ChoiceField)
        action.choices = [("", "Any action"), *LABELS.items()]
        person = self.fields["person"]
        assert isinstance(person, forms.ModelChoiceField)
        person.queryset = User.objects.filter(
            organization_memberships__organization=organization
        ).order_by("email")


@user_view
@require_http_methods(["GET"])
def security_log(request: AuthenticatedRequest, org_slug: str) -> HttpResponse:
    organization = organization_for(request, org_slug)
    form = SecurityLogFilterForm(request.GET or None, organization=organization)
    action, person = "", None
    if form.is_valid():
        action, person = form.cleaned_data["action"], form.cleaned_data["person"]
    events = audit_events_for(organization=organization, action=action, person=person)
    page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "organization": organization,
        "form": form,
        "page": page,
        "labels": LABELS,
        "query": query.urlencode(),
    }
    status = 400 if form.errors else 200
    return render(request, "web/audit/log.html", context, status=status)
