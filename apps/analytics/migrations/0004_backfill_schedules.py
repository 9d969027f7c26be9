"""Start reading what existed before analytics did: every connected account's followers,
and the metrics of every destination published in the last 90 days (the reads' horizon).
New ones get their schedules from the publish and connect events."""

from django.db import migrations

ACCOUNTS = """
    INSERT INTO analytics_followersschedule (social_account_id, workspace_id, platform,
        next_sync_at, created_at, updated_at)
    SELECT id, workspace_id, platform, now(), now(), now()
      FROM accounts_socialaccount
     WHERE status = 'connected'
    ON CONFLICT DO NOTHING
"""

RENDITIONS = """
    INSERT INTO analytics_metricsschedule (rendition_id, workspace_id, social_account_id,
        platform, published_at, next_sync_at, syncs, stopped_reason, engagement_notified,
        created_at, updated_at)
    SELECT id, workspace_id, social_account_id, platform, published_at, now(), 0, '', 0,
           now(), now()
      FROM renditions_rendition
     WHERE status = 'published' AND provider_post_id <> ''
       AND published_at > now() - interval '90 days'
    ON CONFLICT DO NOTHING
"""


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0003_engagement_notified"),
    ]

    operations = [
        migrations.RunSQL(ACCOUNTS, reverse_sql=migrations.RunSQL.noop),
        migrations.RunSQL(RENDITIONS, reverse_sql=migrations.RunSQL.noop),
    ]
