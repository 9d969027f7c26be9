"""Token scopes after the ``admin`` scope: minting and revoking tokens, managing webhooks and
connecting or disconnecting accounts now need ``admin`` (they needed ``write``), and ``cli``
(checked nowhere) is gone.

A live token keeps those powers, gaining ``admin``, only where its maker would have them in
the web app today: it holds ``write`` and was made by the operator (no creator:
``create_api_token``, the demo) or by someone who is still an admin of its workspace (a
workspace admin, or an owner or admin of its organization). Other tokens lose them; no
token gains a power it did not have.
"""

from django.db import migrations
from django.db.models import Q

ORG_ADMIN_ROLES = ("owner", "admin")
SCOPE_ORDER = ["read", "write", "publish", "admin", "mcp"]


def _creator_is_admin(token, WorkspaceMembership, OrganizationMembership) -> bool:
    user = token.created_by
    if not user.is_active:
        return False
    org_role = (
        OrganizationMembership.objects.filter(
            user=user, organization_id=token.workspace.organization_id
        )
        .values_list("role", flat=True)
        .first()
    )
    if org_role in ORG_ADMIN_ROLES:
        return True
    return WorkspaceMembership.objects.filter(
        user=user, workspace_id=token.workspace_id, role="admin"
    ).exists()


def forwards(apps, schema_editor):
    ApiToken = apps.get_model("accounts", "ApiToken")
    WorkspaceMembership = apps.get_model("accounts", "WorkspaceMembership")
    OrganizationMembership = apps.get_model("accounts", "OrganizationMembership")
    tokens = ApiToken.objects.select_related("created_by", "workspace").filter(
        Q(scopes__contains=["cli"]) | Q(scopes__contains=["write"])
    )
    for token in tokens.iterator():
        scopes = [scope for scope in token.scopes if scope != "cli"]
        if (
            token.revoked_at is None
            and "write" in scopes
            and "admin" not in scopes
            and (
                token.created_by is None
                or _creator_is_admin(token, WorkspaceMembership, OrganizationMembership)
            )
        ):
            scopes = sorted([*scopes, "admin"], key=SCOPE_ORDER.index)
        if scopes != token.scopes:
            token.scopes = scopes
            token.save(update_fields=["scopes"])


def backwards(apps, schema_editor):
    # The earlier code knows no ``admin`` scope (``write`` did its work); ``cli`` granted
    # nothing, so it is not restored.
    ApiToken = apps.get_model("accounts", "ApiToken")
    for token in ApiToken.objects.filter(scopes__contains=["admin"]).iterator():
        token.scopes = [scope for scope in token.scopes if scope != "admin"]
        token.save(update_fields=["scopes"])


class Migration(migrations.Migration):
    dependencies = [("accounts", "0005_apitoken_parent")]

    operations = [migrations.RunPython(forwards, backwards)]
