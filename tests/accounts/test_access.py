"""The token access policy: scopes held, and reads only for a suspended organization."""

import pytest

from apps.accounts.access import check_grantable, token_refusal
from apps.accounts.models import Organization
from apps.common.errors import PermissionDenied


@pytest.fixture
def suspended(org_a):
    org_a.state = Organization.State.SUSPENDED
    org_a.save()


def test_a_token_needs_every_scope_the_call_names(workspace_a, make_token):
    token = make_token(workspace_a, scopes=["read", "write"]).token

    assert token_refusal(token, "read") is None
    assert token_refusal(token, None) is None
    refusal = token_refusal(token, ("write", "publish"))
    assert refusal.code == "INSUFFICIENT_SCOPE"
    assert refusal.details == {"required": ["write", "publish"], "token_scopes": ["read", "write"]}


def test_a_suspended_organization_may_only_make_reads(workspace_a, make_token, suspended):
    token = make_token(workspace_a).token

    assert token_refusal(token, "read") is None
    assert token_refusal(token, "write").code == "ORGANIZATION_SUSPENDED"
    assert token_refusal(token, ("write", "publish")).code == "ORGANIZATION_SUSPENDED"


def test_a_token_grants_only_scopes_it_holds(workspace_a, make_token):
    token = make_token(workspace_a, scopes=["read", "write"]).token

    check_grantable(token, ["read"])
    with pytest.raises(PermissionDenied) as refused:
        check_grantable(token, ["read", "publish"])
    assert refused.value.code == "SCOPE_ESCALATION"
