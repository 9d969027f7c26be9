"""Operators' view of the queue: jobs (read-only, with retry / cancel / release actions)
and the worker processes that poll it."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.common.admin_paging import BoundedCountPaginator, values_filter
from apps.jobs import services
from apps.jobs.models import Job, WorkerProcess
from apps.jobs.registry import job_types
from apps.jobs.selectors import workers_polling


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "type",
        "status",
        "seat",
        "organization",
        "workspace",
        "run_at",
        "attempts_display",
        "error_kind",
        "locked_by",
        "finished_at",
    ]
    # Types from the registry, not a DISTINCT over the history; no organization or
    # workspace filter (it would list every tenant): search by the organization's id.
    list_filter = ["status", "seat", values_filter("type", "type", lambda: sorted(job_types()))]
    list_select_related = ["organization", "workspace__organization"]
    search_fields = ["=id", "=organization__id", "type", "dedupe_key", "locked_by"]
    raw_id_fields = ["organization", "workspace"]
    ordering = ["-id"]
    show_full_result_count = False  # counting a large history on every page is slow
    paginator = BoundedCountPaginator
    actions = ["retry_now", "cancel", "release_lock"]
    fieldsets = [
        (None, {"fields": ["type", "status", "seat", "organization", "workspace", "dedupe_key"]}),
        ("Schedule", {"fields": ["run_at", "attempts", "max_attempts", "recoveries"]}),
        ("Payload and outcome", {"fields": ["payload", "last_error", "snoozed_s", "waited_s"]}),
        ("Lease", {"fields": ["locked_by", "locked_at", "lease"]}),
        ("Dates", {"fields": ["created_at", "started_at", "finished_at", "updated_at"]}),
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False  # read-only; the actions below change jobs through services

    def has_delete_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False

    def has_operate_permission(self, request: HttpRequest) -> bool:
        """The actions: for operators who may change jobs (the form itself stays read-only)."""
        return request.user.has_perm("jobs.change_job")

    @admin.display(description="attempts")
    def attempts_display(self, job: Job) -> str:
        return f"{job.attempts}/{job.max_attempts}"

    @admin.display(description="error")
    def error_kind(self, job: Job) -> str:
        return (job.last_error or {}).get("kind", "")

    @admin.action(
        description="Retry now (failed, pending or waiting jobs)", permissions=["operate"]
    )
    def retry_now(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        moved = services.job_retry_now(job_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"{moved} job(s) will run as soon as a worker is free.")

    @admin.action(description="Cancel (pending or waiting jobs)", permissions=["operate"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        reason = f"Cancelled by {request.user} in the admin."
        cancelled = sum(
            services.job_cancel(job_id=pk, reason=reason)
            for pk in queryset.values_list("pk", flat=True)
        )
        level = messages.SUCCESS if cancelled else messages.WARNING
        self.message_user(request, f"Cancelled {cancelled} job(s).", level)

    @admin.action(
        description="Release lock (recover processing jobs by their type's stale policy)",
        permissions=["operate"],
    )
    def release_lock(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        released = services.job_release(job_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"Recovered {released} processing job(s).")


@admin.register(WorkerProcess)
class WorkerProcessAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "host",
        "pid",
        "threads",
        "is_polling",
        "jobs_running",
        "jobs_done",
        "started_at",
        "last_seen_at",
        "stopped_at",
    ]
    list_filter = ["host", ("stopped_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "host"]
    ordering = ["-last_seen_at"]
    readonly_fields = [f.name for f in WorkerProcess._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: WorkerProcess | None = None) -> bool:
        return False

    @admin.display(boolean=True, description="polling")
    def is_polling(self, worker: WorkerProcess) -> bool:
        return worker.pk in self._polling

    def get_queryset(self, request: HttpRequest) -> QuerySet[WorkerProcess]:
        self._polling = set(workers_polling().values_list("pk", flat=True))
        return super().get_queryset(request)
