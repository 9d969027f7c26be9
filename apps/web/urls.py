from django.contrib.auth import views as auth_views
from django.urls import include, path

from apps.security.decorators import throttle_signup
from apps.security.views import login as security_login
from apps.web import connect
from apps.web.forms.auth import PasswordResetForm, SetPasswordForm
from apps.web.views import (
    accounts,
    calendar,
    composer,
    home,
    imports,
    invitations,
    organizations,
    people,
    portal,
    portal_links,
    publications,
    reviews,
    team,
    tokens,
)
from apps.web.views import analytics as analytics_views  # post metrics (issue 35)
from apps.web.views import audit as audit_views  # the security log (issue 19)
from apps.web.views import evergreen as evergreen_views  # evergreen posts (issue 34)
from apps.web.views import inbox as inbox_views  # comments and replies (issue 35)
from apps.web.views import media_library as media_views  # the media library (issue 20)
from apps.web.views import queue as queue_views  # queue and posting slots (issue 20)
from apps.web.views import series as series_views  # webhooks and series (issue 10)
from apps.web.views import webhooks as webhook_views  # webhooks and series (issue 10)
from apps.web.views import zones as zone_views  # zone names for the zone fields (issue 34)

auth_patterns = [
    path("login/", security_login.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(next_page="login"), name="logout"),
    path("signup/", throttle_signup(people.signup), name="signup"),
    path("signup/sent/", people.signup_sent, name="signup-sent"),
    path("verify-email/", people.email_verification, name="email-verification"),
    path("verify-email/<str:token>/", people.email_verify, name="email-verify"),
    path("invitations/join/<int:pk>/", invitations.invitation_join, name="invitation-join"),
    path("invitations/<str:token>/", invitations.invitation_view, name="invitation"),
    path(
        "password-reset/",
        security_login.PasswordResetView.as_view(form_class=PasswordResetForm),
        name="password_reset",
    ),
    path(
        "password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(form_class=SetPasswordForm),
        name="password_reset_confirm",
    ),
    path(
        "reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path(
        "settings/password/",
        auth_views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "settings/password/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("settings/", people.profile_settings, name="profile-settings"),
    # `socialpost login` confirmed in the browser (apps.accounts.cli_login).
    path("cli/login/", tokens.cli_login_confirm_view, name="cli-login"),
]

organization_patterns = [
    path("new/", organizations.organization_create_view, name="organization-create"),
    path("<slug:org_slug>/", organizations.organization_detail, name="organization-detail"),
    path("<slug:org_slug>/invite/", organizations.organization_invite, name="organization-invite"),
    path(
        "<slug:org_slug>/security-log/", audit_views.security_log, name="organization-security-log"
    ),
    path(
        "<slug:org_slug>/members/<int:user_id>/role/",
        organizations.organization_member_role,
        name="organization-member-role",
    ),
    path(
        "<slug:org_slug>/members/<int:user_id>/remove/",
        organizations.organization_member_remove,
        name="organization-member-remove",
    ),
    path(
        "<slug:org_slug>/invitations/<int:pk>/resend/",
        organizations.organization_invitation_resend,
        name="organization-invitation-resend",
    ),
    path(
        "<slug:org_slug>/invitations/<int:pk>/revoke/",
        organizations.organization_invitation_revoke,
        name="organization-invitation-revoke",
    ),
    path(
        "<slug:org_slug>/workspaces/new/",
        organizations.workspace_create_view,
        name="workspace-create",
    ),
]

# Every page below is /w/<workspace_slug>/...: a workspace the user cannot see is a 404.
workspace_patterns = [
    path("", home.workspace_home, name="workspace-home"),
    path("first-steps/hide/", home.first_steps_hide, name="first-steps-hide"),
    # Accounts (the platforms' own connect flows are in apps.web.connect).
    path("accounts/", accounts.accounts_list, name="workspace-accounts"),
    path("accounts/sandbox/", accounts.sandbox_connect, name="sandbox-connect"),
    path("accounts/<int:pk>/disconnect/", accounts.account_disconnect, name="account-disconnect"),
    path("accounts/<int:pk>/reconnect/", accounts.account_reconnect, name="account-reconnect"),
    path(
        "accounts/<int:pk>/retry-failed/",
        accounts.account_retry_failed,
        name="account-retry-failed",
    ),
    path("connect/<str:platform>/", connect.connect_start, name="connect-start"),
    path("connect/<str:platform>/password/", connect.connect_password, name="connect-password"),
    path(
        "connect/<str:platform>/choose/<str:pending>/",
        connect.connect_choose,
        name="connect-choose",
    ),
    # Composing.
    path("compose/", composer.compose, name="composer"),
    path("compose/check/", composer.composer_check, name="composer-check"),
    path("media/<int:pk>/", composer.media_file, name="media-file"),
    # The media library (issue 20).
    path("media/", media_views.media_library, name="media-library"),
    path("media/upload/", media_views.media_upload, name="media-upload"),
    path("media/<int:pk>/alt-text/", media_views.media_alt_text, name="media-alt-text"),
    path("media/<int:pk>/delete/", media_views.media_delete, name="media-delete"),
    # Calendar and posts.
    path("calendar/", calendar.calendar, name="calendar"),
    path("calendar/move/<int:pk>/", calendar.calendar_move, name="calendar-move"),
    path("posts/", publications.publication_list, name="publication-list"),
    path("posts/import/", imports.import_upload, name="post-import"),
    path("posts/import/<str:import_id>/", imports.import_detail, name="post-import-detail"),
    path("posts/import/<str:import_id>/run/", imports.import_run, name="post-import-run"),
    path("posts/<int:pk>/", publications.publication_detail_view, name="publication-detail"),
    path("posts/<int:pk>/edit/", composer.publication_edit, name="publication-edit"),
    path(
        "posts/<int:pk>/reschedule/",
        publications.publication_reschedule_view,
        name="publication-reschedule",
    ),
    path("posts/<int:pk>/cancel/", publications.publication_cancel_view, name="publication-cancel"),
    path("posts/<int:pk>/retry/", publications.publication_retry_view, name="publication-retry"),
    path(
        "posts/<int:pk>/destinations/<int:rendition_pk>/",
        publications.rendition_card,
        name="rendition-card",
    ),
    path(
        "posts/<int:pk>/destinations/<int:rendition_pk>/retry/",
        publications.rendition_retry_view,
        name="rendition-retry",
    ),
    path(
        "posts/<int:pk>/destinations/<int:rendition_pk>/resolve/",
        publications.rendition_resolve_view,
        name="rendition-resolve",
    ),
    path(
        "posts/<int:pk>/destinations/<int:rendition_pk>/first-comment/retry/",
        publications.first_comment_retry_view,
        name="first-comment-retry",
    ),
    path(
        "posts/<int:pk>/destinations/<int:rendition_pk>/first-comment/posted/",
        publications.first_comment_posted_view,
        name="first-comment-posted",
    ),
    path(
        "posts/<int:pk>/destinations/<int:rendition_pk>/edit-retry/",
        publications.rendition_edit_retry_view,
        name="rendition-edit-retry",
    ),
    # The inbox: comments under published posts, replies (issue 35).
    path("inbox/", inbox_views.inbox_page, name="inbox"),
    path("inbox/settings/", inbox_views.inbox_settings_view, name="inbox-settings"),
    path("inbox/<int:pk>/", inbox_views.inbox_thread, name="inbox-thread"),
    path("inbox/<int:pk>/reply/", inbox_views.inbox_reply, name="inbox-reply"),
    path("inbox/<int:pk>/done/", inbox_views.inbox_done, name="inbox-done"),
    path("inbox/<int:pk>/assign/", inbox_views.inbox_assign, name="inbox-assign"),
    path("inbox/<int:pk>/moderate/", inbox_views.inbox_moderate, name="inbox-moderate"),
    path(
        "inbox/replies/<int:pk>/decide/",
        inbox_views.inbox_reply_decide,
        name="inbox-reply-decide",
    ),
    path("inbox/replies/<int:pk>/retry/", inbox_views.inbox_reply_retry, name="inbox-reply-retry"),
    path("inbox/replies/<int:pk>/found/", inbox_views.inbox_reply_found, name="inbox-reply-found"),
    # Team and tokens.
    path("reviews/", reviews.review_queue, name="reviews"),
    path("reviews/rule/", reviews.review_rule_set, name="review-rule"),
    path("posts/<int:pk>/review/submit/", reviews.review_submit_view, name="review-submit"),
    path("posts/<int:pk>/review/approve/", reviews.review_approve_view, name="review-approve"),
    path("posts/<int:pk>/review/changes/", reviews.review_changes_view, name="review-changes"),
    path("posts/<int:pk>/review/hold/", reviews.review_hold_view, name="review-hold"),
    path("posts/<int:pk>/review/comment/", reviews.review_comment_view, name="review-comment"),
    path("reviews/links/", portal_links.portal_link_list, name="portal-links"),
    path("reviews/links/new/", portal_links.portal_link_create_view, name="portal-link-create"),
    path(
        "reviews/links/<int:pk>/revoke/",
        portal_links.portal_link_revoke_view,
        name="portal-link-revoke",
    ),
    path("team/", team.workspace_team, name="workspace-team"),
    path("team/invite/", team.workspace_invite, name="workspace-invite"),
    path("team/<int:user_id>/role/", team.workspace_member_role, name="workspace-member-role"),
    path(
        "team/<int:user_id>/remove/",
        team.workspace_member_remove,
        name="workspace-member-remove",
    ),
    path(
        "team/invitations/<int:pk>/resend/",
        team.workspace_invitation_resend,
        name="workspace-invitation-resend",
    ),
    path(
        "team/invitations/<int:pk>/revoke/",
        team.workspace_invitation_revoke,
        name="workspace-invitation-revoke",
    ),
    path("tokens/", tokens.token_list, name="api-tokens"),
    path("tokens/new/", tokens.token_create, name="api-token-create"),
    path("tokens/<int:pk>/revoke/", tokens.token_revoke, name="api-token-revoke"),
    # Webhooks and recurring series (issue 10).
    path("webhooks/", webhook_views.webhook_list, name="webhooks"),
    path("webhooks/new/", webhook_views.webhook_create, name="webhook-create"),
    path("webhooks/<int:pk>/", webhook_views.webhook_detail, name="webhook-detail"),
    path("webhooks/<int:pk>/toggle/", webhook_views.webhook_toggle, name="webhook-toggle"),
    path("webhooks/<int:pk>/rotate/", webhook_views.webhook_rotate, name="webhook-rotate"),
    path("webhooks/<int:pk>/delete/", webhook_views.webhook_delete, name="webhook-delete"),
    path("webhooks/<int:pk>/test/", webhook_views.webhook_send_test_view, name="webhook-send-test"),
    path(
        "webhooks/<int:pk>/deliveries/<int:delivery_pk>/redeliver/",
        webhook_views.webhook_redeliver_view,
        name="webhook-redeliver",
    ),
    path("series/", series_views.series_list, name="series"),
    path("series/new/", series_views.series_create_view, name="series-create"),
    path("series/<int:pk>/", series_views.series_detail, name="series-detail"),
    path("series/<int:pk>/pause/", series_views.series_pause_view, name="series-pause"),
    path("series/<int:pk>/resume/", series_views.series_resume_view, name="series-resume"),
    path("series/<int:pk>/delete/", series_views.series_delete_view, name="series-delete"),
    # The queue and its posting slots (issue 20).
    path("queue/", queue_views.queue, name="queue"),
    path("queue/move/", queue_views.queue_move, name="queue-move"),
    path("queue/<int:pk>/remove/", queue_views.queue_remove_view, name="queue-remove"),
    path("queue/slots/", queue_views.queue_slots, name="queue-slots"),
    # Analytics: the period page and a post's metrics per destination (issue 35).
    path("analytics/", analytics_views.analytics_page, name="analytics"),
    path(
        "posts/<int:pk>/metrics/",
        analytics_views.publication_metrics,
        name="publication-metrics",
    ),
    # Evergreen posts, shared again into the queue's free slots (issue 34).
    path("evergreen/", evergreen_views.evergreen_list, name="evergreen"),
    path("evergreen/mark/", evergreen_views.evergreen_mark_view, name="evergreen-mark"),
    path("evergreen/<int:pk>/", evergreen_views.evergreen_detail, name="evergreen-detail"),
    path(
        "evergreen/<int:pk>/settings/",
        evergreen_views.evergreen_update_view,
        name="evergreen-update",
    ),
    path(
        "evergreen/<int:pk>/<slug:action>/",
        evergreen_views.evergreen_action_view,
        name="evergreen-action",
    ),
]

urlpatterns = [
    path("", home.home, name="home"),
    *auth_patterns,
    path("o/", include(organization_patterns)),
    path("w/<slug:workspace_slug>/", include(workspace_patterns)),
    path("connect/<str:platform>/callback/", connect.connect_callback, name="connect-callback"),
    # A client's review through a link, without an account.
    path("portal/<str:token>/", portal.portal_page, name="portal"),
    path("portal/<str:token>/posts/<int:pk>/", portal.portal_decide, name="portal-decide"),
    path("zones/", zone_views.zone_name_options, name="zone-names"),
]
