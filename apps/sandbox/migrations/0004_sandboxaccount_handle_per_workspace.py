import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """The workspace is required, and a handle is unique per workspace, not globally."""

    dependencies = [("sandbox", "0003_fill_sandboxaccount_workspace")]

    operations = [
        migrations.AlterField(
            model_name="sandboxaccount",
            name="workspace",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="sandbox_accounts",
                to="accounts.workspace",
            ),
        ),
        migrations.AlterField(
            model_name="sandboxaccount",
            name="handle",
            field=models.CharField(max_length=100),
        ),
        migrations.AddConstraint(
            model_name="sandboxaccount",
            constraint=models.UniqueConstraint(
                fields=("workspace", "handle"), name="sandbox_account_handle_per_workspace"
            ),
        ),
    ]
