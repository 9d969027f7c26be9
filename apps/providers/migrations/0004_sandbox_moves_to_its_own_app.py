from django.db import migrations


class Migration(migrations.Migration):
    """The sandbox platform's models now belong to the sandbox app (its 0001_initial).

    Only Django's state forgets them here: the tables stay, under their names, and the
    sandbox app takes them over without touching the database.
    """

    dependencies = [
        ("providers", "0003_sandbox_processing"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="SandboxPost"),
                migrations.DeleteModel(name="SandboxMedia"),
                migrations.DeleteModel(name="SandboxAccount"),
            ],
            database_operations=[],
        ),
    ]
