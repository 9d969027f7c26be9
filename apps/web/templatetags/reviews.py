"""The review panel of a post's page: `{% review_panel publication %}`."""

from django import template

from apps.approvals.rule import needs_approval as _needs_approval
from apps.web.views.reviews import review_panel_context

register = template.Library()


@register.inclusion_tag("web/reviews/_panel.html", takes_context=True)
def review_panel(context, publication):
    panel = review_panel_context(context["request"], publication)
    panel["csrf_token"] = context.get("csrf_token")
    return panel


@register.simple_tag(takes_context=True)
def needs_approval(context, workspace) -> bool:
    """Whether this person's posts wait for an admin's approval in the workspace."""
    return _needs_approval(workspace, context["request"].user)
