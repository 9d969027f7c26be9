"""apps.common.deferred_checks: checks run at once, or at the end of a deferred() block."""

import pytest
from django.db import transaction

from apps.common.deferred_checks import deferred, run_last

pytestmark = pytest.mark.django_db


def test_without_a_block_a_check_runs_at_once():
    ran = []
    run_last(lambda: ran.append("check"))
    assert ran == ["check"]


def test_in_a_block_checks_run_at_its_end_in_order_after_the_rest_of_the_work():
    ran = []
    with transaction.atomic(), deferred():
        run_last(lambda: ran.append("first"))
        run_last(lambda: ran.append("second"))
        ran.append("work")
    assert ran == ["work", "first", "second"]


def test_a_nested_block_leaves_its_checks_to_the_outer_one():
    ran = []
    with transaction.atomic(), deferred():
        with deferred():
            run_last(lambda: ran.append("check"))
        ran.append("after the inner block")
    assert ran == ["after the inner block", "check"]


def test_a_block_that_fails_runs_no_check_and_the_next_call_runs_at_once():
    ran = []
    with pytest.raises(ValueError), transaction.atomic(), deferred():
        run_last(lambda: ran.append("check"))
        raise ValueError("the work failed")
    assert ran == []
    run_last(lambda: ran.append("now"))
    assert ran == ["now"]


@pytest.mark.django_db(transaction=True)  # no test transaction around it
def test_a_block_outside_a_transaction_is_refused():
    with pytest.raises(RuntimeError, match="transaction"), deferred():
        pass
