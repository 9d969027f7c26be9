"""Posts published in the 90 days before the inbox existed get a read schedule, due now;
later posts get theirs when they are published (the rendition.published event)."""

from datetime import timedelta

from django.db import migrations
from django.utils import timezone

CHUNK = 2000


def fill(apps, schema_editor):
    Rendition = apps.get_model("renditions", "Rendition")
    CommentSync = apps.get_model("inbox", "CommentSync")
    now = timezone.now()
    recent = (
        Rendition.objects.filter(status="published", published_at__gte=now - timedelta(days=90))
        .exclude(provider_post_id="")
        .values_list("pk", "workspace_id", "platform")
        .order_by("pk")
    )
    batch = []
    for pk, workspace_id, platform in recent.iterator(chunk_size=CHUNK):
        batch.append(
            CommentSync(
                rendition_id=pk, workspace_id=workspace_id, platform=platform, next_read_at=now
            )
        )
        if len(batch) >= CHUNK:
            CommentSync.objects.bulk_create(batch, ignore_conflicts=True)
            batch = []
    CommentSync.objects.bulk_create(batch, ignore_conflicts=True)


class Migration(migrations.Migration):
    dependencies = [
        ("inbox", "0001_initial"),
    ]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
