"""The rendition's effective time (its own, else its publication's) is a column the
database keeps, whoever writes either time and however."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.publications.models import Publication
from apps.publishing.services.rows import allocate_ids, assign_ids, insert_rows
from apps.renditions.models import Rendition
from tests.factories import PublicationFactory, RenditionFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db

NINE = datetime(2031, 3, 4, 9, 0, tzinfo=UTC)
TEN = NINE + timedelta(hours=1)


def stored(rendition: Rendition) -> datetime | None:
    return Rendition.objects.values_list("effective_at", flat=True).get(pk=rendition.pk)


def test_insert_takes_the_publication_time_and_returns_it(workspace_a):
    rendition = RenditionFactory(publication__workspace=workspace_a, publication__scheduled_at=NINE)
    assert rendition.effective_at == NINE  # read back by the INSERT
    assert stored(rendition) == NINE


def test_own_time_wins_and_clearing_it_falls_back(workspace_a):
    rendition = RenditionFactory(
        publication__workspace=workspace_a, publication__scheduled_at=NINE, scheduled_at=TEN
    )
    assert stored(rendition) == TEN
    rendition.scheduled_at = None
    rendition.save(update_fields=["scheduled_at"])
    assert stored(rendition) == NINE
    Rendition.objects.filter(pk=rendition.pk).update(scheduled_at=TEN + timedelta(days=1))
    assert stored(rendition) == TEN + timedelta(days=1)


def test_moving_the_publication_moves_the_renditions_that_follow_it(workspace_a):
    publication = PublicationFactory(workspace=workspace_a, scheduled_at=NINE)
    follows = RenditionFactory(publication=publication)
    own = RenditionFactory(publication=publication, scheduled_at=TEN)
    publication.scheduled_at = NINE + timedelta(days=2)
    publication.save()
    assert stored(follows) == NINE + timedelta(days=2)
    assert stored(own) == TEN
    Publication.objects.filter(pk=publication.pk).update(scheduled_at=None)
    assert stored(follows) is None
    assert stored(own) == TEN


def test_a_status_write_leaves_it_alone(workspace_a):
    rendition = RenditionFactory(publication__workspace=workspace_a, publication__scheduled_at=NINE)
    rendition.transition_to(Rendition.Status.SCHEDULED)
    assert stored(rendition) == NINE


def test_bulk_create_and_one_statement_inserts(workspace_a):
    account = SocialAccountFactory(workspace=workspace_a)
    other = SocialAccountFactory(workspace=workspace_a)
    publication = PublicationFactory(workspace=workspace_a, scheduled_at=NINE)
    [made] = Rendition.objects.bulk_create(
        [Rendition(publication=publication, workspace=workspace_a, social_account=account)]
    )
    assert made.effective_at == NINE
    # The publication and its renditions inserted by one statement (chained CTEs, the
    # rendition first): the publication is not visible to the rendition's trigger, and
    # the publication's trigger, at the end of the statement, fills it.
    new = Publication(workspace=workspace_a, scheduled_at=TEN, timezone="UTC")
    rendition = Rendition(publication=new, workspace=workspace_a, social_account=other)
    [[pub_id], [rendition_id]] = allocate_ids([(Publication, 1), (Rendition, 1)])
    assign_ids([new], [pub_id])
    assign_ids([rendition], [rendition_id])
    rendition.publication = new
    insert_rows([rendition], [new])
    assert stored(rendition) == TEN
    own_time = Rendition(
        publication=new, workspace=workspace_a, social_account=account, scheduled_at=NINE
    )
    Rendition.objects.bulk_create([own_time])
    assert stored(own_time) == NINE


def test_with_effective_scheduled_at_reads_the_column(workspace_a):
    rendition = RenditionFactory(publication__workspace=workspace_a, publication__scheduled_at=NINE)
    query = str(
        Rendition.objects.with_effective_scheduled_at().filter(effective_at__gte=NINE).query
    )
    assert "COALESCE" not in query.upper()
    assert list(
        Rendition.objects.with_effective_scheduled_at()
        .filter(effective_at__gte=NINE)
        .values_list("pk", flat=True)
    ) == [rendition.pk]
