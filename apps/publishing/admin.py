"""The admin of the publish flow: publications shown with their renditions, and renditions
with the actions people take on them (cancel, retry, resolve an ambiguous outcome), all
through ``apps.publishing.services``."""

from django import forms
from django.contrib import admin, messages
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse

from apps.accounts.models import User
from apps.common.admin_paging import BoundedCountPaginator, values_filter
from apps.common.errors import DomainError
from apps.providers.catalog import platforms
from apps.publications.admin import PublicationSegmentInline
from apps.publications.models import Publication
from apps.publishing import services
from apps.renditions.admin import (
    DeliveryAttemptInline,
    ErrorKindFilter,
    FirstCommentInline,
    RenditionSegmentInline,
)
from apps.renditions.models import Rendition


class AdminRequest(HttpRequest):
    """A request that passed ``admin_site.admin_view``: a signed-in staff user."""

    user: User


class HasAmbiguousRenditionFilter(admin.SimpleListFilter):
    title = "ambiguous rendition"
    parameter_name = "ambiguous"

    def lookups(self, request, model_admin) -> list[tuple[str, str]]:
        return [("yes", "Has an ambiguous rendition"), ("no", "None ambiguous")]

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        ambiguous = Rendition.objects.filter(publication=OuterRef("pk"), ambiguous=True)
        if self.value() == "yes":
            return queryset.filter(Exists(ambiguous))
        if self.value() == "no":
            return queryset.exclude(Exists(ambiguous))
        return queryset


class RenditionInline(admin.TabularInline):
    model = Rendition
    extra = 0
    fields = (
        "social_account",
        "platform",
        "status",
        "scheduled_at",
        "attempts",
        "next_retry_at",
        "ambiguous",
        "provider_url",
        "error_summary",
    )
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="error")
    def error_summary(self, obj: Rendition) -> str:
        return _error_summary(obj)


def _error_summary(rendition: Rendition) -> str:
    error = rendition.last_error or {}
    if not error:
        return ""
    return f"{error.get('kind')}: {error.get('message', '')}"[:120]


@admin.register(Publication)
class PublicationAdmin(admin.ModelAdmin):
    """Publications change through the services (revisions, quotas, delivery hooks), so
    the admin shows them and offers the cancel action; it does not edit them."""

    list_display = ["id", "workspace", "status", "scheduled_at", "timezone", "revision", "author"]
    list_filter = ["status", HasAmbiguousRenditionFilter]
    search_fields = ["reference_key", "workspace__slug", "segments__text"]
    # The workspace's name shows its organization's slug: joined, not one query a row.
    list_select_related = ["workspace__organization", "author"]
    # No date_hierarchy (a DISTINCT over every row's date) and no full count: the table
    # holds every tenant's posts.
    show_full_result_count = False
    paginator = BoundedCountPaginator
    fields = (
        "workspace",
        "author",
        "status",
        "scheduled_at",
        "timezone",
        "revision",
        "reference_key",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields
    inlines = [PublicationSegmentInline, RenditionInline]
    actions = ["cancel"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Cancel what has not gone out")
    def cancel(self, request: HttpRequest, queryset: QuerySet) -> None:
        for publication in queryset:
            services.publication_cancel(publication=publication)
        self.message_user(
            request, f"Cancelled {queryset.count()} publication(s).", messages.SUCCESS
        )


class ResolveForm(forms.Form):
    outcome = forms.ChoiceField(
        choices=[
            ("published", "Published: the post exists (give its URL)"),
            ("failed", "Failed: the post does not exist, leave it failed"),
            ("retry", "Retry: the post does not exist, send it again"),
        ],
        widget=forms.RadioSelect,
    )
    provider_url = forms.URLField(required=False, label="Post URL", assume_scheme="https")


@admin.register(Rendition)
class RenditionAdmin(admin.ModelAdmin):
    """Read-only: a rendition's state changes only through its transitions."""

    list_display = [
        "id",
        "publication",
        "platform",
        "social_account",
        "status",
        "ambiguous",
        "attempts",
        "next_retry_at",
        "error_kind",
        "updated_at",
    ]
    list_filter = [
        "status",
        values_filter("platform", "platform", platforms),  # not a DISTINCT over the table
        "ambiguous",
        ErrorKindFilter,
    ]
    search_fields = ["provider_post_id", "social_account__handle", "workspace__slug"]
    list_select_related = ["publication", "social_account"]
    show_full_result_count = False
    paginator = BoundedCountPaginator
    raw_id_fields = ["publication", "workspace", "social_account"]
    readonly_fields = [f.name for f in Rendition._meta.fields]
    inlines = [RenditionSegmentInline, FirstCommentInline, DeliveryAttemptInline]
    actions = ["retry", "resolve_retry", "resolve_failed", "cancel"]
    change_form_template = "admin/renditions/rendition/change_form.html"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="error kind")
    def error_kind(self, obj: Rendition) -> str:
        return (obj.last_error or {}).get("kind", "")

    def _each(self, request, queryset, action, done: str) -> None:
        count = 0
        for rendition in queryset:
            try:
                action(rendition)
                count += 1
            except DomainError as exc:
                self.message_user(
                    request, f"Rendition {rendition.pk}: {exc.message}", messages.ERROR
                )
        if count:
            self.message_user(request, f"{done} {count} rendition(s).", messages.SUCCESS)

    @admin.action(description="Retry failed destinations now")
    def retry(self, request, queryset) -> None:
        self._each(
            request,
            queryset,
            lambda r: services.rendition_retry(rendition=r, user=request.user),
            "Retried",
        )

    @admin.action(description="Resolve ambiguous: not on the platform, send again")
    def resolve_retry(self, request, queryset) -> None:
        self._each(
            request,
            queryset,
            lambda r: services.rendition_resolve(rendition=r, outcome="retry", user=request.user),
            "Resolved (retry)",
        )

    @admin.action(description="Resolve ambiguous: not on the platform, leave failed")
    def resolve_failed(self, request, queryset) -> None:
        self._each(
            request,
            queryset,
            lambda r: services.rendition_resolve(rendition=r, outcome="failed", user=request.user),
            "Resolved (failed)",
        )

    @admin.action(description="Cancel destinations that have not gone out")
    def cancel(self, request, queryset) -> None:
        self._each(
            request,
            queryset,
            lambda r: services.rendition_cancel(rendition=r, user=request.user),
            "Cancelled",
        )

    def get_urls(self):
        resolve = path(
            "<int:pk>/resolve/",
            self.admin_site.admin_view(self.resolve_view),
            name="renditions_rendition_resolve",
        )
        return [resolve, *super().get_urls()]

    def resolve_view(self, request: AdminRequest, pk: int) -> HttpResponse:
        """Settle one ambiguous rendition, with the post's URL when it was published."""
        rendition = get_object_or_404(Rendition, pk=pk)
        form = ResolveForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                services.rendition_resolve(
                    rendition=rendition,
                    outcome=form.cleaned_data["outcome"],
                    provider_url=form.cleaned_data["provider_url"],
                    user=request.user,
                )
            except DomainError as exc:
                form.add_error(None, exc.message)
            else:
                self.message_user(request, f"Rendition {pk} resolved.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:renditions_rendition_change", args=[pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": f"Resolve rendition {pk}",
            "rendition": rendition,
            "form": form,
            "opts": self.model._meta,
            "attempts": rendition.delivery_attempts.all(),
        }
        return TemplateResponse(request, "admin/renditions/rendition/resolve.html", context)
