"""Vacuum and analyze jobs_job after a fixed number of changed rows, not a fraction of the table.

Every claim leaves a dead entry in the pending-only indexes, and a claim walks past the
dead entries ahead of an organization's earliest pending job until a vacuum removes them.
With the default scale factors (20% dead rows before a vacuum, 10% changes before an
analyze) a table holding a million finished jobs would wait for 200,000 dead rows; at a
fixed threshold a burst's leftovers are gone within a minute (autovacuum's nap time), and
the statistics follow bursts as closely. A vacuum skips the all-visible pages of the
finished history, so its cost follows the recent changes (plus one pass over each index).
"""

from django.db import migrations

_SETTINGS = {
    "autovacuum_vacuum_scale_factor": "0.0",
    "autovacuum_vacuum_threshold": "5000",
    "autovacuum_analyze_scale_factor": "0.0",
    "autovacuum_analyze_threshold": "5000",
}


class Migration(migrations.Migration):
    dependencies = [("jobs", "0004_fill_job_seat")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE jobs_job SET ("
            + ", ".join(f"{name} = {value}" for name, value in _SETTINGS.items())
            + ")",
            reverse_sql="ALTER TABLE jobs_job RESET (" + ", ".join(_SETTINGS) + ")",
        )
    ]
