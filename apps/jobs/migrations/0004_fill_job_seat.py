from django.db import migrations


def fill_seat(apps, schema_editor) -> None:
    """Unfinished jobs take the seat their type declares now (new jobs get it at enqueue).
    Types no longer registered keep the default."""
    from apps.jobs.constants import Seat
    from apps.jobs.registry import job_types

    Job = apps.get_model("jobs", "Job")
    for name, job_type in job_types().items():
        if job_type.seat != Seat.PUBLISH:
            Job.objects.filter(
                type=name, status__in=["pending", "processing", "waiting"]
            ).update(seat=job_type.seat.value)


class Migration(migrations.Migration):
    dependencies = [("jobs", "0003_job_seat")]

    operations = [migrations.RunPython(fill_seat, migrations.RunPython.noop)]
