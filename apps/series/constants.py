"""Job types and bounds of the series materializer."""

MATERIALIZE_JOB = "series.materialize"  # periodic: every active series
MATERIALIZE_ONE_JOB = "series.materialize_one"  # one series, soon after it changed
# Occurrences one run turns into publications per series; the rest wait for the next run.
MAX_OCCURRENCES_PER_RUN = 200
