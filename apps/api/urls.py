from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from apps.api.base import ID_PATTERN
from apps.api.views.accounts import AccountViewSet
from apps.api.views.analytics import AnalyticsView, RenditionMetricsView
from apps.api.views.bulk import PublicationBulkViewSet
from apps.api.views.capabilities import CapabilitiesView
from apps.api.views.evergreen import EvergreenViewSet
from apps.api.views.inbox import CommentViewSet, ReplyViewSet
from apps.api.views.me import MeView
from apps.api.views.media import MediaViewSet
from apps.api.views.portal_links import PortalLinkViewSet
from apps.api.views.publications import PublicationViewSet
from apps.api.views.renditions import RenditionViewSet
from apps.api.views.reviews import ApprovalRuleView, ReviewViewSet
from apps.api.views.series import SeriesViewSet
from apps.api.views.tokens import CliLoginStartView, CliLoginTokenView, TokenViewSet
from apps.api.views.webhooks import WebhookViewSet
from apps.api.views_queue import (
    AccountQueueSlotsViewSet,
    PublicationQueueViewSet,
    WorkspaceQueueSlotsViewSet,
)


class Router(DefaultRouter):
    """One router for every resource, kebab-case prefixes; a slash at the end is optional
    (DRF's constructor only knows "/" or nothing) and there are no format suffixes."""

    include_root_view = False
    include_format_suffixes = False

    def __init__(self) -> None:
        super().__init__()
        self.trailing_slash = "/?"


router = Router()
router.register("accounts", AccountViewSet, basename="account")
router.register("media", MediaViewSet, basename="media")
router.register("publications/bulk", PublicationBulkViewSet, basename="publication-bulk")
router.register("publications", PublicationViewSet, basename="publication")
router.register("renditions", RenditionViewSet, basename="rendition")
router.register("reviews", ReviewViewSet, basename="review")
router.register("portal-links", PortalLinkViewSet, basename="portal-link")
router.register("tokens", TokenViewSet, basename="token")
router.register("webhooks", WebhookViewSet, basename="webhook")
router.register("series", SeriesViewSet, basename="series")
router.register("evergreen", EvergreenViewSet, basename="evergreen")
router.register("comments", CommentViewSet, basename="comment")
router.register("replies", ReplyViewSet, basename="reply")

v1 = [
    path("me", MeView.as_view(), name="me"),
    # `socialpost login` confirmed in the browser: the two calls made before a token.
    re_path(r"^cli/login/?$", CliLoginStartView.as_view(), name="cli-login-start"),
    re_path(r"^cli/login/token/?$", CliLoginTokenView.as_view(), name="cli-login-token"),
    path("capabilities", CapabilitiesView.as_view(), name="capabilities"),
    # The queue and its posting slots (docs/api.md, "Queue").
    re_path(
        r"^queue-slots/?$",
        WorkspaceQueueSlotsViewSet.as_view({"get": "retrieve", "put": "update"}),
        name="queue-slots",
    ),
    re_path(
        rf"^accounts/(?P<pk>{ID_PATTERN})/queue-slots/?$",
        AccountQueueSlotsViewSet.as_view({"get": "retrieve", "put": "update", "delete": "destroy"}),
        name="account-queue-slots",
    ),
    re_path(
        rf"^publications/(?P<pk>{ID_PATTERN})/queue/?$",
        PublicationQueueViewSet.as_view({"post": "queue"}),
        name="publication-queue",
    ),
    re_path(r"^approval-rule/?$", ApprovalRuleView.as_view(), name="approval-rule"),
    re_path(
        rf"^renditions/(?P<pk>{ID_PATTERN})/metrics/?$",
        RenditionMetricsView.as_view(),
        name="rendition-metrics",
    ),
    re_path(r"^analytics/?$", AnalyticsView.as_view(), name="analytics"),
    path("", include(router.urls)),
]

urlpatterns = [
    path("v1/", include((v1, "api"), namespace="v1")),
    path(
        "schema/",
        SpectacularAPIView.as_view(permission_classes=[], authentication_classes=[]),
        name="schema",
    ),
    # The split view serves its start-up script as a file: the site's CSP allows no inline script.
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="schema", permission_classes=[], authentication_classes=[]
        ),
        name="docs",
    ),
]
