"""apps.common.json_rows: rows read as JSON from SQL compiled once, against PostgreSQL."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Organization, SocialAccount, Workspace
from apps.common.json_rows import JsonQuery, Nested, Shape, json_object, load

pytestmark = pytest.mark.django_db

_WORKSPACE = Shape(Workspace, joined={"organization": Shape(Organization, ("id", "name"))})


def test_a_row_comes_back_as_the_orm_loads_it_with_its_joined_row(workspace_a):
    query = JsonQuery(
        lambda pk: Workspace.objects.filter(pk=pk).values(row=json_object(_WORKSPACE)),
        pk=-7_000_000_001,
    )

    [row] = query.rows(pk=workspace_a.pk)
    workspace = load(_WORKSPACE, row)

    expected = Workspace.objects.get(pk=workspace_a.pk)
    assert [getattr(workspace, f.attname) for f in Workspace._meta.concrete_fields] == [
        getattr(expected, f.attname) for f in Workspace._meta.concrete_fields
    ]
    with CaptureQueriesContext(connection) as captured:
        assert workspace.organization.name == "Org A"
    assert len(captured) == 0
    # Fields the shape left out are deferred, as with .only().
    assert workspace.organization.get_deferred_fields() >= {"slug", "state"}


def test_a_percent_sign_in_the_compiled_sql_is_kept_and_each_call_binds_its_values(
    org_a, workspace_a
):
    Organization.objects.filter(pk=org_a.pk).update(name="100% Org")
    query = JsonQuery(
        # "contains" compiles to LIKE '%100\\% Org%': percent signs in a constant parameter.
        lambda pk: Organization.objects.filter(pk=pk, name__contains="100% Org").values(
            row=json_object(Shape(Organization, ("id", "name")))
        ),
        pk=-7_000_000_001,
    )

    assert [r["name"] for r in query.rows(pk=org_a.pk)] == ["100% Org"]
    assert query.rows(pk=org_a.pk + 1000) == []


def test_nested_rows_are_cached_as_prefetch_related_would(workspace_a):
    SocialAccount.objects.create(
        workspace=workspace_a, platform="sandbox", handle="b", remote_id="2"
    )
    SocialAccount.objects.create(
        workspace=workspace_a, platform="sandbox", handle="a", remote_id="1"
    )
    shape = Shape(
        Workspace,
        nested=(
            Nested(
                "social_accounts",
                "workspace",
                Shape(SocialAccount, ("id", "workspace_id", "handle")),
                ("handle",),
            ),
        ),
    )
    query = JsonQuery(
        lambda pk: Workspace.objects.filter(pk=pk).values(row=json_object(shape)),
        pk=-7_000_000_001,
    )

    workspace = load(shape, query.rows(pk=workspace_a.pk)[0])

    with CaptureQueriesContext(connection) as captured:
        handles = [a.handle for a in workspace.social_accounts.all()]
        back = {a.workspace is workspace for a in workspace.social_accounts.all()}
    assert handles == ["a", "b"] and back == {True}
    assert len(captured) == 0
    # Chained, the cached relation queries the parent's rows only, as the manager would.
    other = Workspace.objects.create(organization=workspace_a.organization, name="o", slug="o")
    SocialAccount.objects.create(workspace=other, platform="sandbox", handle="c", remote_id="3")
    chained = workspace.social_accounts.all().order_by("handle")
    assert [a.handle for a in chained] == ["a", "b"]
    assert sorted(a.handle for a in workspace.social_accounts.filter(handle__gt="a")) == ["b"]
    assert all(a.workspace is workspace for a in chained)


def test_a_stand_in_that_is_not_found_exactly_once_is_refused(workspace_a):
    query = JsonQuery(
        lambda pk: Workspace.objects.filter(pk=pk, organization_id=pk).values(
            row=json_object(Shape(Workspace, ("id",)))
        ),
        pk=-7_000_000_001,
    )

    with pytest.raises(RuntimeError, match="appears 2 times"):
        query.rows(pk=workspace_a.pk)


def test_binary_fields_are_refused():
    with pytest.raises(ValueError, match="credentials_ciphertext"):
        json_object(Shape(SocialAccount))
