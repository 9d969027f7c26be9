"""Vacuum and analyze the queue heads after a fixed number of changed rows (as jobs_job,
see 0005): every claim rewrites the heads it serves, and the claim's due read walks past
dead index entries of heads until a vacuum removes them."""

from django.db import migrations

_SETTINGS = {
    "autovacuum_vacuum_scale_factor": "0.0",
    "autovacuum_vacuum_threshold": "5000",
    "autovacuum_analyze_scale_factor": "0.0",
    "autovacuum_analyze_threshold": "5000",
}


class Migration(migrations.Migration):
    dependencies = [("jobs", "0007_queue_heads")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE jobs_queuehead SET ("
            + ", ".join(f"{name} = {value}" for name, value in _SETTINGS.items())
            + ")",
            reverse_sql="ALTER TABLE jobs_queuehead RESET (" + ", ".join(_SETTINGS) + ")",
        )
    ]
