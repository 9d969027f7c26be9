"""Accounts made before email verification existed count as verified: they were opened and
used under the old rules, and taking their access away would lock people out."""

from django.db import migrations
from django.db.models import F


def fill(apps, schema_editor) -> None:
    User = apps.get_model("accounts", "User")
    User.objects.filter(email_verified_at__isnull=True).update(email_verified_at=F("created_at"))


class Migration(migrations.Migration):
    dependencies = [("accounts", "0008_invitation_email_verification")]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
