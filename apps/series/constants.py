"""Job types and bounds of the series materializer."""

MATERIALIZE_JOB = "series.materialize"  # periodic: one organization job per organization
MATERIALIZE_ORGANIZATION_JOB = "series.materialize_organization"  # one organization's series
MATERIALIZE_ONE_JOB = "series.materialize_one"  # one series, soon after it changed
# Occurrences one run turns into publications per series; the rest wait for the next run.
MAX_OCCURRENCES_PER_RUN = 200
# Wall-clock seconds one organization job spends before it queues its own continuation.
ORGANIZATION_RUN_SECONDS = 5.0
