"""PostgreSQL for the test run, with one difference: a test that commits (transactional
tests, live servers, child processes) is cleaned up mostly by DELETE rather than TRUNCATE.

TRUNCATE of the ~90 tables gives each a new file, which took 1-2 s per test on a loaded
2-core runner; deleting the few rows a test wrote takes milliseconds. Foreign keys are
deferred until the flush commits, so the order of the deletes does not matter. A table
left with many rows is truncated all the same, and every 25th flush truncates everything,
so dead rows never pile up under the query plans the plan tests check."""
