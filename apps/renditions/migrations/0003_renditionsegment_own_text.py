"""A rendition segment stores its text only where the destination overrides the source:
the column ``text`` becomes nullable (null: the source segment's text), and the copies
renditions that follow the source hold of it are emptied."""

from django.db import migrations, models

INHERIT = """
UPDATE renditions_renditionsegment AS rs
   SET text = NULL
  FROM publications_publicationsegment AS ps, renditions_rendition AS r
 WHERE rs.source_segment_id = ps.id
   AND rs.rendition_id = r.id
   AND NOT r.overrides_content
   AND rs.text = ps.text
"""

COPY_BACK = """
UPDATE renditions_renditionsegment AS rs
   SET text = coalesce(ps.text, '')
  FROM renditions_renditionsegment AS self
  LEFT JOIN publications_publicationsegment AS ps ON ps.id = self.source_segment_id
 WHERE rs.id = self.id AND rs.text IS NULL
"""


class Migration(migrations.Migration):
    dependencies = [
        ("publications", "0001_initial"),
        ("renditions", "0002_rendition_checkpoint_deliveryattempt"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField("renditionsegment", "text", "own_text"),
                migrations.AlterField(
                    model_name="renditionsegment",
                    name="own_text",
                    field=models.TextField(
                        blank=True,
                        db_column="text",
                        help_text="This destination's own text; null: the source segment's.",
                        null=True,
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE renditions_renditionsegment ALTER COLUMN text DROP NOT NULL",
                    reverse_sql=(
                        "ALTER TABLE renditions_renditionsegment ALTER COLUMN text SET NOT NULL"
                    ),
                ),
            ],
        ),
        migrations.RunSQL(INHERIT, reverse_sql=COPY_BACK),
    ]
