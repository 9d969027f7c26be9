from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse

from apps.common.errors import DomainError
from apps.providers.errors import ErrorKind
from apps.renditions import services
from apps.renditions.models import DeliveryAttempt, Rendition, RenditionSegment


class ErrorKindFilter(admin.SimpleListFilter):
    title = "error kind"
    parameter_name = "error_kind"

    def lookups(self, request, model_admin) -> list[tuple[str, str]]:
        return [(kind.value, kind.value.replace("_", " ")) for kind in ErrorKind]

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        if self.value():
            return queryset.filter(last_error__kind=self.value())
        return queryset


class RenditionSegmentInline(admin.TabularInline):
    model = RenditionSegment
    extra = 0
    fields = ["position", "text", "source_segment", "provider_post_id", "provider_url"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class DeliveryAttemptInline(admin.TabularInline):
    """The evidence an operator reads before resolving an ambiguous outcome."""

    model = DeliveryAttempt
    extra = 0
    fields = [
        "started_at",
        "kind",
        "segment_position",
        "outcome",
        "worker",
        "idempotency_key",
        "provider_post_id",
        "error",
        "note",
    ]
    readonly_fields = fields
    can_delete = False
    ordering = ["started_at", "id"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


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
    list_filter = ["status", "platform", "ambiguous", ErrorKindFilter]
    search_fields = ["provider_post_id", "social_account__handle", "workspace__slug"]
    list_select_related = ["publication", "social_account"]
    raw_id_fields = ["publication", "workspace", "social_account"]
    readonly_fields = [f.name for f in Rendition._meta.fields]
    inlines = [RenditionSegmentInline, DeliveryAttemptInline]
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

    def resolve_view(self, request: HttpRequest, pk: int) -> HttpResponse:
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


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(admin.ModelAdmin):
    """Append-only evidence of every call to a platform."""

    list_display = [
        "id",
        "rendition",
        "kind",
        "segment_position",
        "outcome",
        "worker",
        "started_at",
        "finished_at",
    ]
    list_filter = ["kind", "outcome"]
    search_fields = ["idempotency_key", "provider_post_id", "worker", "rendition__id"]
    list_select_related = ["rendition"]
    raw_id_fields = ["rendition", "workspace"]
    readonly_fields = [f.name for f in DeliveryAttempt._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
