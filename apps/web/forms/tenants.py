"""Organizations, workspaces and their members."""

from __future__ import annotations

from django import forms

from apps.accounts.models import OrganizationMembership, WorkspaceMembership
from apps.web.forms.common import ZoneField


class OrganizationCreateForm(forms.Form):
    organization_name = forms.CharField(
        label="Organization name",
        max_length=200,
        help_text="Your company or agency. It holds the plan, the members and the workspaces.",
    )
    workspace_name = forms.CharField(
        label="First workspace",
        max_length=200,
        initial="Main",
        help_text="A team's or a client's space: its accounts, posts and tokens.",
    )
    default_timezone = ZoneField(
        label="Workspace time zone", widget=forms.Select(attrs={"data-guess-zone": "1"})
    )


class WorkspaceCreateForm(forms.Form):
    name = forms.CharField(label="Workspace name", max_length=200)
    slug = forms.SlugField(
        label="Address",
        max_length=80,
        required=False,
        help_text="Used in links: /w/<address>/. Leave empty to derive it from the name.",
    )
    default_timezone = ZoneField(
        label="Default time zone", widget=forms.Select(attrs={"data-guess-zone": "1"})
    )


class WorkspaceInviteForm(forms.Form):
    email = forms.EmailField(label="Email")
    role = forms.ChoiceField(
        label="Role",
        choices=WorkspaceMembership.Role.choices,
        initial=WorkspaceMembership.Role.EDITOR,
        help_text="Viewers read; editors write, schedule and retry; admins also manage "
        "members, accounts and tokens.",
    )


class WorkspaceRoleForm(forms.Form):
    role = forms.ChoiceField(label="Role", choices=WorkspaceMembership.Role.choices)


class OrganizationInviteForm(forms.Form):
    email = forms.EmailField(label="Email")
    role = forms.ChoiceField(
        label="Organization role",
        choices=OrganizationMembership.Role.choices,
        initial=OrganizationMembership.Role.MEMBER,
        help_text="Owners and admins administer every workspace of the organization and see "
        "this page; members see only the workspaces they are added to.",
    )


class OrganizationRoleForm(forms.Form):
    role = forms.ChoiceField(label="Role", choices=OrganizationMembership.Role.choices)
