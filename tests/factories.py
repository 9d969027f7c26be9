"""Factories for the rows tests arrange. Set explicitly every field a test is about."""

import factory
from factory.django import DjangoModelFactory

from apps.accounts.models import (
    Organization,
    OrganizationMembership,
    SocialAccount,
    User,
    Workspace,
    WorkspaceMembership,
)


class UserFactory(DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ["email"]
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    name = factory.Faker("name")
    password = factory.django.Password("correct horse battery")


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
