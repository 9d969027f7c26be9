from django.db import migrations

# apps.jobs.constants.HEADS_LOCK_NAMESPACE and HEADS_LOCK_STRIPES, frozen here.
HEADS_LOCK_NAMESPACE = 0x68656164
HEADS_LOCK_STRIPES = 1024

# The claim parks the due queue heads of an organization that is not active (suspended,
# deleted): no claim reads them while its jobs wait. When the organization is active
# again, each of its heads moves back to its earliest pending job (jobs enqueued while it
# was parked included) and the workers are woken. The shared lock of the organization's
# stripe is the one enqueuers take: the claim parks a head only while no one holds it.
UNPARK_SQL = f"""
CREATE FUNCTION jobs_queue_heads_unpark() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(
        {HEADS_LOCK_NAMESPACE}, (NEW.id % {HEADS_LOCK_STRIPES})::int);
    UPDATE jobs_queuehead h
       SET next_run_at = (SELECT j.run_at FROM jobs_job j
                           WHERE j.status = 'pending' AND j.organization_id = h.organization_id
                             AND j.seat = h.seat AND j.lane = h.lane
                           ORDER BY j.run_at, j.id LIMIT 1)
     WHERE h.organization_id = NEW.id;
    PERFORM pg_notify('jobs_job', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER jobs_queue_heads_on_activate AFTER UPDATE OF state ON accounts_organization
    FOR EACH ROW WHEN (NEW.state = 'active' AND OLD.state IS DISTINCT FROM 'active')
    EXECUTE FUNCTION jobs_queue_heads_unpark();
"""  # noqa: S608 - only constants are spliced in

DROP_SQL = """
DROP TRIGGER jobs_queue_heads_on_activate ON accounts_organization;
DROP FUNCTION jobs_queue_heads_unpark();
"""


class Migration(migrations.Migration):
    dependencies = [("jobs", "0009_lanes")]

    operations = [migrations.RunSQL(UNPARK_SQL, DROP_SQL)]
