"""Short soaks under our own faults. A database fault: the soak starts its own PostgreSQL,
restarts it while posts are mid-publish, and accounts for every rendition (nothing stuck,
lost or posted twice, by key or by text); the shared database never sees the run. A hang:
one organization's destinations hang past the provider timeout, the fault lifts, and every
one of its renditions ends final."""

import io
import json

import pytest

from apps.accounts.models import Organization
from loadtest.private_pg import PrivatePostgresUnavailable, find_bin_dir
from loadtest.soak import Soak, SoakConfig
from loadtest.soak_chaos import DB_RESTART_FAST, HANG, FaultTimes
from tests.processes import test_database_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_database_restart_mid_publish_strands_loses_and_duplicates_nothing():
    try:
        find_bin_dir()
    except PrivatePostgresUnavailable as exc:
        pytest.skip(str(exc))
    config = SoakConfig(
        publications=8,
        destinations=2,
        workers=1,
        workspaces=1,
        threads=2,
        spread_s=1,
        kill_every_s=0,
        timeout_s=150,  # a bound, not a wait: the run ends once every post is settled
        chaos=DB_RESTART_FAST,
        fault_times=FaultTimes(every_s=0, times=1),
        # The schema copied from the test database: migrating anew takes tens of seconds.
        private_db_seed_url=test_database_url(),
    )
    progress = io.StringIO()
    figures = Soak(config=config, progress=progress).run()

    shown = json.dumps(figures)
    assert figures["chaos"] == DB_RESTART_FAST
    assert [f["what"] for f in figures["faults"]] == [DB_RESTART_FAST], shown
    assert figures["renditions"] == 16
    assert figures["stuck"] == 0, shown
    assert figures["lost"] == 0, shown
    assert figures["duplicates_by_key"] == 0, shown
    assert figures["duplicates_by_text"] == 0, shown
    assert figures["published"] + figures["failed"] == 16, shown
    assert "private database" in progress.getvalue()
    assert "private_database" not in figures  # not kept: stopped and removed
    # The run happened on the private server only.
    assert not Organization.objects.filter(slug__startswith="soak-").exists()


def test_a_hang_lifts_and_the_hanging_organization_settles_with_nothing_lost():
    config = SoakConfig(
        publications=8,
        destinations=2,
        workers=1,
        workspaces=2,
        threads=2,
        spread_s=1,
        kill_every_s=0,
        timeout_s=150,  # a bound, not a wait: the run ends once every post is settled
        chaos=HANG,
        # Lifted 1 s after the first due time: the hanging posts then still hold their
        # thread to the provider timeout, so the run is still on when it lifts.
        fault_times=FaultTimes(hang_s=1),
        hang_reference=False,
        database_url=test_database_url(),
    )
    figures = Soak(config=config, progress=io.StringIO()).run()

    shown = json.dumps(figures)
    assert figures["chaos"] == HANG
    (fault,) = figures["faults"]
    assert fault["what"] == HANG and fault["detail"].startswith("lifted"), shown
    hanging = figures["hanging_organization"]
    assert hanging["renditions"] == 8, shown
    assert hanging["not_final"] == 0, shown
    assert hanging["published"] + hanging["failed"] + hanging["still_checking"] == 8, shown
    assert figures["lost"] == 0, shown
    assert figures["stuck"] == 0, shown
    assert figures["still_running"] == 0, shown
    assert figures["duplicates_by_key"] == 0, shown
