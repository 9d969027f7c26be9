"""Every action the audit log records, with the label the security log shows.

Most are the security events of `apps.common.events` under the same name; the sign-in
actions come from Django's auth signals.
"""

from apps.common import events

LOGIN = "user.login"
LOGOUT = "user.logout"
LOGIN_FAILED = "user.login_failed"
TWO_FACTOR_ENABLED = events.TWO_FACTOR_ENABLED
TWO_FACTOR_DISABLED = events.TWO_FACTOR_DISABLED
MEMBER_INVITED = events.MEMBER_INVITED
MEMBER_INVITE_ACCEPTED = events.MEMBER_INVITE_ACCEPTED
MEMBER_INVITE_REVOKED = events.MEMBER_INVITE_REVOKED
MEMBER_ADDED = events.MEMBER_ADDED
EMAIL_VERIFIED = events.USER_EMAIL_VERIFIED
MEMBER_ROLE_CHANGED = events.MEMBER_ROLE_CHANGED
MEMBER_REMOVED = events.MEMBER_REMOVED
TOKEN_CREATED = events.TOKEN_CREATED
TOKEN_REVOKED = events.TOKEN_REVOKED
ACCOUNT_CONNECTED = events.ACCOUNT_CONNECTED
ACCOUNT_DISCONNECTED = events.ACCOUNT_DISCONNECTED
WEBHOOK_CREATED = events.WEBHOOK_CREATED
WEBHOOK_UPDATED = events.WEBHOOK_UPDATED
WEBHOOK_SECRET_ROTATED = events.WEBHOOK_SECRET_ROTATED
WEBHOOK_DELETED = events.WEBHOOK_DELETED
RENDITION_RESOLVED = events.RENDITION_RESOLVED
APPROVAL_RULE_CHANGED = events.APPROVAL_RULE_CHANGED
MEDIA_ALT_TEXT_CHANGED = events.MEDIA_ALT_TEXT_CHANGED
# A publication's review, by step (the event's ``review`` state names the step).
REVIEW_SUBMITTED = "review.submitted"
REVIEW_APPROVED = "review.approved"
REVIEW_CHANGES_REQUESTED = "review.changes_requested"
REVIEW_ON_HOLD = "review.on_hold"
PORTAL_LINK_CREATED = events.PORTAL_LINK_CREATED
PORTAL_LINK_REVOKED = events.PORTAL_LINK_REVOKED
PORTAL_VIEWED = events.PORTAL_VIEWED

LABELS: dict[str, str] = {
    LOGIN: "Signed in",
    LOGOUT: "Signed out",
    LOGIN_FAILED: "Failed sign-in",
    TWO_FACTOR_ENABLED: "Two-factor on",
    TWO_FACTOR_DISABLED: "Two-factor off",
    MEMBER_INVITED: "Invited",
    MEMBER_INVITE_ACCEPTED: "Invitation accepted",
    MEMBER_INVITE_REVOKED: "Invitation revoked",
    MEMBER_ADDED: "Added",
    EMAIL_VERIFIED: "Email verified",
    MEMBER_ROLE_CHANGED: "Role changed",
    MEMBER_REMOVED: "Removed",
    TOKEN_CREATED: "Token created",
    TOKEN_REVOKED: "Token revoked",
    ACCOUNT_CONNECTED: "Account connected",
    ACCOUNT_DISCONNECTED: "Account disconnected",
    WEBHOOK_CREATED: "Webhook added",
    WEBHOOK_UPDATED: "Webhook changed",
    WEBHOOK_SECRET_ROTATED: "Webhook secret rotated",
    WEBHOOK_DELETED: "Webhook deleted",
    RENDITION_RESOLVED: "Delivery resolved",
    APPROVAL_RULE_CHANGED: "Approval rule changed",
    MEDIA_ALT_TEXT_CHANGED: "Alt text of a post's media changed",
    REVIEW_SUBMITTED: "Submitted for approval",
    REVIEW_APPROVED: "Approved",
    REVIEW_CHANGES_REQUESTED: "Changes requested",
    REVIEW_ON_HOLD: "Put on hold",
    PORTAL_LINK_CREATED: "Client link created",
    PORTAL_LINK_REVOKED: "Client link revoked",
    PORTAL_VIEWED: "Client link opened",
}
