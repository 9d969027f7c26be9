import uuid

from django.db import migrations, models


def create_installation(apps, schema_editor):
    Installation = apps.get_model("accounts", "Installation")
    if not Installation.objects.exists():
        Installation.objects.create(id=uuid.uuid4())


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="Installation",
            fields=[
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.RunPython(create_installation, migrations.RunPython.noop),
    ]
