from django.db import migrations


def fill_workspace(apps, schema_editor):
    """Each sandbox account belongs to the workspace whose SocialAccount points at it.

    An account no workspace is connected to any more is deleted: with the witness scoped
    to the owning workspace, nobody could see what it holds.
    """
    SandboxAccount = apps.get_model("sandbox", "SandboxAccount")
    SocialAccount = apps.get_model("accounts", "SocialAccount")
    owners = dict(
        SocialAccount.objects.filter(platform="sandbox").values_list("remote_id", "workspace_id")
    )
    for account in SandboxAccount.objects.filter(workspace__isnull=True).iterator():
        workspace_id = owners.get(str(account.pk))
        if workspace_id is None:
            account.delete()
        else:
            SandboxAccount.objects.filter(pk=account.pk).update(workspace_id=workspace_id)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_inflight_cap_help"),
        ("sandbox", "0002_sandboxaccount_workspace"),
    ]

    operations = [migrations.RunPython(fill_workspace, migrations.RunPython.noop)]
