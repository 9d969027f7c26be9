"""The review panel of a post's page: `{% review_panel publication %}`."""

from django import template

from apps.web.views.reviews import review_panel_context

register = template.Library()


@register.inclusion_tag("web/reviews/_panel.html", takes_context=True)
def review_panel(context, publication):
    panel = review_panel_context(context["request"], publication)
    panel["csrf_token"] = context.get("csrf_token")
    return panel
