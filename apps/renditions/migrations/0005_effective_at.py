"""A rendition's effective time as a column the database keeps, its indexes, and the fill.

``effective_at`` is ``coalesce(rendition.scheduled_at, publication.scheduled_at)``. A
generated column cannot read another table, and the times are written from many places
(create, bulk create, edits, reschedules, swaps, series, the admin, raw INSERTs of several
tables in one statement), so triggers keep it instead of each writer:

- on a rendition, before it is inserted or either of its own times is written: its own
  time, else its publication's (when the publication is visible: a publication inserted by
  the same statement is not yet, and the trigger below covers that case);
- on a publication, after it is inserted or its time changes: the renditions that follow
  its time take the new one (these fire at the end of the statement, when every row the
  statement wrote is visible).
"""

from django.db import migrations, models

TRIGGERS = """
CREATE FUNCTION rendition_effective_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.scheduled_at IS NOT NULL THEN
        NEW.effective_at := NEW.scheduled_at;
    ELSE
        NEW.effective_at := (
            SELECT p.scheduled_at FROM publications_publication p WHERE p.id = NEW.publication_id
        );
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER rendition_effective_at
    BEFORE INSERT OR UPDATE OF scheduled_at, publication_id, effective_at
    ON renditions_rendition
    FOR EACH ROW EXECUTE FUNCTION rendition_effective_at();

CREATE FUNCTION publication_effective_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE renditions_rendition
       SET effective_at = NEW.scheduled_at
     WHERE publication_id = NEW.id
       AND scheduled_at IS NULL
       AND effective_at IS DISTINCT FROM NEW.scheduled_at;
    RETURN NULL;
END
$$;

CREATE TRIGGER publication_effective_at_insert
    AFTER INSERT ON publications_publication
    FOR EACH ROW EXECUTE FUNCTION publication_effective_at();

CREATE TRIGGER publication_effective_at_update
    AFTER UPDATE OF scheduled_at ON publications_publication
    FOR EACH ROW WHEN (OLD.scheduled_at IS DISTINCT FROM NEW.scheduled_at)
    EXECUTE FUNCTION publication_effective_at();
"""

DROP_TRIGGERS = """
DROP TRIGGER IF EXISTS publication_effective_at_update ON publications_publication;
DROP TRIGGER IF EXISTS publication_effective_at_insert ON publications_publication;
DROP FUNCTION IF EXISTS publication_effective_at();
DROP TRIGGER IF EXISTS rendition_effective_at ON renditions_rendition;
DROP FUNCTION IF EXISTS rendition_effective_at();
"""

# Existing rows, before the triggers exist (the column was just added, under the table's
# lock, so nothing is written in between).
FILL = """
UPDATE renditions_rendition r
   SET effective_at = coalesce(r.scheduled_at, p.scheduled_at)
  FROM publications_publication p
 WHERE p.id = r.publication_id
   AND coalesce(r.scheduled_at, p.scheduled_at) IS NOT NULL
"""


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0009_fill_email_verified"),
        ("publications", "0002_first_comment"),
        ("renditions", "0004_first_comment"),
    ]

    operations = [
        migrations.AddField(
            model_name="rendition",
            name="effective_at",
            field=models.DateTimeField(blank=True, db_default=None, editable=False, null=True),
        ),
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop, elidable=False),
        migrations.RunSQL(TRIGGERS, reverse_sql=DROP_TRIGGERS),
        migrations.AddIndex(
            model_name="rendition",
            index=models.Index(
                condition=models.Q(("status", "scheduled")),
                fields=["social_account", "effective_at", "id"],
                name="rendition_queue",
            ),
        ),
        migrations.AddIndex(
            model_name="rendition",
            index=models.Index(
                condition=models.Q(("status", "scheduled")),
                fields=["effective_at"],
                name="rendition_due",
            ),
        ),
    ]
