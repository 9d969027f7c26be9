import django.db.models.deletion
from django.db import migrations, models

import apps.sandbox.models

MODELS = ["sandboxaccount", "sandboxmedia", "sandboxpost"]


def content_types_follow(apps, schema_editor, *, source: str, target: str) -> None:
    """Relabel the models' content types so permissions and admin history stay theirs."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label=source, model__in=MODELS).update(app_label=target)


def forwards(apps, schema_editor):
    content_types_follow(apps, schema_editor, source="providers", target="sandbox")


def backwards(apps, schema_editor):
    content_types_follow(apps, schema_editor, source="sandbox", target="providers")


class Migration(migrations.Migration):
    """The sandbox platform's models, taken over from the providers app.

    The tables were created by providers.0001_initial and keep their names (db_table), so
    only Django's state changes here; the database is left as it is.
    """

    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("providers", "0004_sandbox_moves_to_its_own_app"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="SandboxAccount",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("handle", models.CharField(max_length=100, unique=True)),
                        ("behaviour", models.JSONField(blank=True, default=dict)),
                        ("counters", models.JSONField(blank=True, default=dict)),
                        (
                            "access_token",
                            models.CharField(default=apps.sandbox.models._token, max_length=64),
                        ),
                        (
                            "refresh_token",
                            models.CharField(default=apps.sandbox.models._token, max_length=64),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                    ],
                    options={"db_table": "providers_sandboxaccount"},
                ),
                migrations.CreateModel(
                    name="SandboxMedia",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("size_bytes", models.PositiveBigIntegerField()),
                        ("mime_type", models.CharField(blank=True, max_length=100)),
                        ("alt_text", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "account",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="media",
                                to="sandbox.sandboxaccount",
                            ),
                        ),
                    ],
                    options={"db_table": "providers_sandboxmedia"},
                ),
                migrations.CreateModel(
                    name="SandboxPost",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("text", models.TextField(blank=True)),
                        (
                            "idempotency_key",
                            models.CharField(blank=True, db_index=True, max_length=200),
                        ),
                        ("ready_at", models.DateTimeField(blank=True, null=True)),
                        ("processing_fails", models.BooleanField(default=False)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "account",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="posts",
                                to="sandbox.sandboxaccount",
                            ),
                        ),
                        # The implicit join table is named after db_table, so it stays
                        # providers_sandboxpost_media.
                        ("media", models.ManyToManyField(blank=True, to="sandbox.sandboxmedia")),
                        (
                            "reply_to",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="replies",
                                to="sandbox.sandboxpost",
                            ),
                        ),
                    ],
                    options={"db_table": "providers_sandboxpost", "ordering": ["id"]},
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]
