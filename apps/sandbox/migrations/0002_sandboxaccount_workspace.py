import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Sandbox accounts belong to a workspace (added nullable, filled next, then required).
    The table keeps its name (providers_sandboxaccount)."""

    dependencies = [
        ("accounts", "0004_inflight_cap_help"),
        ("sandbox", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="sandboxaccount",
            name="workspace",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="sandbox_accounts",
                to="accounts.workspace",
            ),
        ),
    ]
