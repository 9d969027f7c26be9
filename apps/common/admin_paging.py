"""Admin changelists over tables that grow with every tenant's history.

Django's changelist counts its rows on every page (the paginator) and, unless told not
to, the whole table again (``show_full_result_count``). On a table of millions that is a
full scan per page view. ``BoundedCountPaginator`` counts at most ``CAP`` rows; past that
an unfiltered list shows the planner's estimate of the table's size, a filtered one CAP
(the operator narrows the filter to see the rest).

``values_filter`` is a list filter whose choices are a known list (job types,
platforms) rather than Django's ``SELECT DISTINCT`` over the whole column.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import QuerySet
from django.utils.functional import cached_property


class BoundedCountPaginator(Paginator):
    CAP = 10_000

    @cached_property
    def count(self) -> int:
        rows = self.object_list
        if not isinstance(rows, QuerySet):
            return len(rows)
        counted = rows.order_by()[: self.CAP + 1].count()
        if counted <= self.CAP:
            return counted
        if not rows.query.where:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
                    [rows.model._meta.db_table],
                )
                (estimate,) = cursor.fetchone()
            return max(int(estimate), self.CAP)
        return self.CAP


def values_filter(
    field: str, title: str, values: Callable[[], list[str]]
) -> type[admin.SimpleListFilter]:
    """A list filter on `field` offering `values()` (read when the page is drawn)."""

    class ValuesFilter(admin.SimpleListFilter):
        parameter_name = field

        def lookups(self, request, model_admin) -> list[tuple[str, str]]:
            return [(value, value) for value in values()]

        def queryset(self, request, queryset: QuerySet) -> QuerySet:
            if self.value():
                return queryset.filter(**{field: self.value()})
            return queryset

    ValuesFilter.title = title
    return ValuesFilter
