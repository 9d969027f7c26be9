"""Factories for the rows tests arrange. Set explicitly every field a test is about."""

from datetime import timedelta

import factory
from django.utils import timezone
from factory.django import DjangoModelFactory

from apps.accounts.models import (
    Organization,
    OrganizationMembership,
    SocialAccount,
    User,
    Workspace,
    WorkspaceMembership,
)
from apps.jobs.models import Job
from apps.publications.models import MediaAsset, Publication, PublicationSegment, SegmentMedia
from apps.renditions.models import Rendition, RenditionMedia, RenditionSegment


class UserFactory(DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ["email"]
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    name = factory.Faker("name")
    password = factory.django.Password("correct horse battery")
    # Most tests are about people who confirmed their address; the verification tests set
    # it to None.
    email_verified_at = factory.LazyFunction(timezone.now)


class OrganizationFactory(DjangoModelFactory):
    class Meta:
        model = Organization

    name = factory.Sequence(lambda n: f"Organization {n}")
    slug = factory.Sequence(lambda n: f"org-{n}")


class WorkspaceFactory(DjangoModelFactory):
    class Meta:
        model = Workspace

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"Workspace {n}")
    slug = factory.Sequence(lambda n: f"ws-{n}")
    default_timezone = "UTC"


class OrganizationMembershipFactory(DjangoModelFactory):
    class Meta:
        model = OrganizationMembership

    organization = factory.SubFactory(OrganizationFactory)
    user = factory.SubFactory(UserFactory)
    role = OrganizationMembership.Role.MEMBER


class WorkspaceMembershipFactory(DjangoModelFactory):
    class Meta:
        model = WorkspaceMembership

    workspace = factory.SubFactory(WorkspaceFactory)
    user = factory.SubFactory(UserFactory)
    role = WorkspaceMembership.Role.EDITOR


class SocialAccountFactory(DjangoModelFactory):
    class Meta:
        model = SocialAccount

    workspace = factory.SubFactory(WorkspaceFactory)
    platform = "sandbox"
    remote_id = factory.Sequence(lambda n: f"remote-{n}")
    handle = factory.Sequence(lambda n: f"account{n}")
    status = SocialAccount.Status.CONNECTED


# --- publications and renditions --------------------------------------------------------


class MediaAssetFactory(DjangoModelFactory):
    """A small PNG. Tests about media limits set kind, mime_type and size_bytes."""

    class Meta:
        model = MediaAsset

    workspace = factory.SubFactory(WorkspaceFactory)
    file = factory.django.ImageField(filename="picture.png", format="PNG", width=8, height=6)
    original_name = "picture.png"
    kind = MediaAsset.Kind.IMAGE
    mime_type = "image/png"
    size_bytes = 1024
    width = 8
    height = 6
    sha256 = factory.Sequence(lambda n: f"{n:064x}")
    alt_text = ""


class PublicationFactory(DjangoModelFactory):
    class Meta:
        model = Publication

    workspace = factory.SubFactory(WorkspaceFactory)
    author = None
    status = Publication.Status.DRAFT
    scheduled_at = None
    timezone = "UTC"


class PublicationSegmentFactory(DjangoModelFactory):
    class Meta:
        model = PublicationSegment

    publication = factory.SubFactory(PublicationFactory)
    position = 0
    text = factory.Faker("sentence")


class SegmentMediaFactory(DjangoModelFactory):
    class Meta:
        model = SegmentMedia

    segment = factory.SubFactory(PublicationSegmentFactory)
    media = factory.SubFactory(
        MediaAssetFactory, workspace=factory.SelfAttribute("..segment.publication.workspace")
    )
    position = 0


class RenditionFactory(DjangoModelFactory):
    """A rendition in any status; statuses are set directly here (arranging state), never
    through this factory in code under test."""

    class Meta:
        model = Rendition

    publication = factory.SubFactory(PublicationFactory)
    workspace = factory.SelfAttribute("publication.workspace")
    social_account = factory.SubFactory(
        SocialAccountFactory, workspace=factory.SelfAttribute("..publication.workspace")
    )
    platform = factory.SelfAttribute("social_account.platform")
    status = Rendition.Status.DRAFT
    settings = factory.LazyFunction(dict)


class RenditionSegmentFactory(DjangoModelFactory):
    class Meta:
        model = RenditionSegment

    rendition = factory.SubFactory(RenditionFactory)
    position = 0
    text = factory.Faker("sentence")


class RenditionMediaFactory(DjangoModelFactory):
    class Meta:
        model = RenditionMedia

    rendition_segment = factory.SubFactory(RenditionSegmentFactory)
    media = factory.SubFactory(
        MediaAssetFactory,
        workspace=factory.SelfAttribute("..rendition_segment.rendition.workspace"),
    )
    position = 0


class JobFactory(DjangoModelFactory):
    """A job row as is (no NOTIFY, no validation): use job_enqueue to test enqueueing.
    run_at defaults to a minute ago so the job is due inside the test's transaction."""

    class Meta:
        model = Job

    organization = factory.SubFactory(OrganizationFactory)
    workspace = None
    type = "noop"
    payload = factory.LazyFunction(dict)
    status = Job.Status.PENDING
    run_at = factory.LazyFunction(lambda: timezone.now() - timedelta(seconds=60))
    max_attempts = 5
