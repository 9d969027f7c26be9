"""docs/delivery.md's per-platform behaviour table is what the capability catalog and the
adapters say: generated from them, and this test fails while the page differs."""

import dataclasses
from datetime import timedelta

from django.core.management import call_command

from apps.providers import behaviour_table
from apps.providers.base import get_adapter
from apps.providers.catalog import get_capabilities


def test_the_page_holds_the_table_the_catalog_and_the_adapters_give():
    page = behaviour_table.delivery_doc().read_text(encoding="utf-8")

    assert behaviour_table.with_table(page) == page, (
        "docs/delivery.md's behaviour table differs from the catalog and the adapters: "
        "run python manage.py behaviour_table --write"
    )


def test_every_catalogued_platform_has_its_row():
    rows = behaviour_table.behaviour_table().splitlines()[2:]

    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == list(
        behaviour_table.all_capabilities()
    )


def test_a_row_follows_the_catalog_and_the_adapter():
    caps, adapter = get_capabilities("threads"), get_adapter("threads")
    row = behaviour_table._row(adapter, caps)
    assert "| yes: DELETE /{threads-media-id}" in row
    assert "polled for up to 15 min" in row

    refused = dataclasses.replace(caps, delete_supported=False, delete_why="platform")
    assert "no, the platform's API cannot" in behaviour_table._row(adapter, refused)


def test_a_lost_answer_is_described_in_the_order_reconciliation_tries():
    mastodon, linkedin = get_adapter("mastodon"), get_adapter("linkedin")

    assert behaviour_table._lost_answer(mastodon) == (
        "ambiguous; then resent under the handle within 1 h, then looked up (best effort), "
        "then a person"
    )
    assert "the duplicate refusal names the post (for 1 day)" in behaviour_table._lost_answer(
        linkedin
    )
    assert behaviour_table._duration(timedelta(minutes=90)) == "90 min"


def test_the_command_prints_the_table(capsys):
    call_command("behaviour_table")

    assert capsys.readouterr().out.startswith("| platform | idempotency handle |")
