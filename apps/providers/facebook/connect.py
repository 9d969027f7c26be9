"""Connecting Facebook Pages through the person who manages them: their token is exchanged
for a long-lived one, their Pages are listed, and `page_select` turns the chosen Page into
the account to store (a Page token derived from a long-lived user token does not expire)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings

from apps.providers.base import ConnectedIdentity
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.meta.graph import FACEBOOK_GRAPH, GRAPH_VERSION, graph_call, graph_client
from apps.providers.meta.login import exchange_token, token_call
from apps.providers.oauth import parse_expires_at

FACEBOOK_AUTHORIZE = f"https://www.facebook.com/{GRAPH_VERSION}/dialog/oauth"
SCOPES = [
    "pages_manage_posts",
    "pages_read_engagement",
    "pages_show_list",
    "publish_video",
    "pages_manage_engagement",  # the first comment under a post
]
# A Page role that may publish (`tasks` of /me/accounts).
PUBLISH_TASK = "CREATE_CONTENT"


def authorization_url(*, state: str, redirect_uri: str) -> str:
    query = {
        "client_id": settings.META_APP_ID,
        "redirect_uri": redirect_uri,
        "state": state,
        "response_type": "code",
        "scope": ",".join(SCOPES),
    }
    return f"{FACEBOOK_AUTHORIZE}?{urlencode(query)}"


def complete_connect(*, code: str, redirect_uri: str) -> ConnectedIdentity:
    """The Page to store when the person can publish to exactly one; otherwise the
    person, with their Pages to choose from in `settings["pages"]` (see
    `account_choices` / `page_select`). Page tokens stay in the credentials."""
    short = token_call(
        "GET",
        f"{FACEBOOK_GRAPH}/oauth/access_token",
        params={
            "client_id": settings.META_APP_ID,
            "redirect_uri": redirect_uri,
            "client_secret": settings.META_APP_SECRET,
            "code": code,
        },
    )
    long_lived = exchange_token(
        f"{FACEBOOK_GRAPH}/oauth/access_token",
        {
            "grant_type": "fb_exchange_token",
            "client_id": settings.META_APP_ID,
            "client_secret": settings.META_APP_SECRET,
            "fb_exchange_token": short["access_token"],
        },
    )
    with graph_client(long_lived["access_token"]) as client:
        me = graph_call(
            client, "GET", f"{FACEBOOK_GRAPH}/me", params={"fields": "id,name"}, is_create=False
        )
        accounts = graph_call(
            client,
            "GET",
            f"{FACEBOOK_GRAPH}/me/accounts",
            params={"fields": "id,name,access_token,tasks", "limit": 100},
            is_create=False,
        )
    pages = accounts.get("data", [])
    if not pages:
        # The person may untick every Page in Facebook's dialog: storing them instead would
        # make an account that can publish nowhere.
        raise ProviderError(
            ErrorKind.PERMISSION_MISSING,
            "No Facebook Page was shared with this site. Connect again and choose at least "
            "one Page you can create content on.",
            code="no_page_granted",
            retryable=False,
            action=Action.RECONNECT,
        )
    person = ConnectedIdentity(
        remote_id=str(me["id"]),
        handle=me.get("name", ""),
        display_name=me.get("name", ""),
        credentials={
            "user_access_token": long_lived["access_token"],
            "page_tokens": {str(p["id"]): p["access_token"] for p in pages},
        },
        token_expires_at=parse_expires_at(long_lived["expires_at"]),
        settings={
            "pages": [
                {
                    "id": str(p["id"]),
                    "name": p.get("name", ""),
                    "can_publish": PUBLISH_TASK in p.get("tasks", [PUBLISH_TASK]),
                }
                for p in pages
            ]
        },
    )
    publishable = [p for p in person.settings["pages"] if p["can_publish"]]
    if len(publishable) == 1:
        # Nothing to choose: the one Page is the account.
        return page_select(person, page_id=publishable[0]["id"])
    return person


def account_choices(identity: ConnectedIdentity) -> list[dict]:
    """The Pages to pick from after connect; empty once the identity is a Page."""
    if "page_id" in identity.settings:
        return []
    return list(identity.settings.get("pages", []))


def page_select(identity: ConnectedIdentity, *, page_id: str) -> ConnectedIdentity:
    """The account to store for the chosen Page: its id, name and Page token.

    Raises LookupError for a Page the person did not grant, or cannot publish to.
    """
    pages = identity.settings.get("pages", [])
    page = next((p for p in pages if p["id"] == str(page_id)), None)
    if page is None:
        raise LookupError(f"Page {page_id} was not among the Pages granted to this site.")
    if not page["can_publish"]:
        raise LookupError(f"The connected person cannot publish to the Page {page['name']}.")
    return ConnectedIdentity(
        remote_id=page["id"],
        handle=page["name"],
        display_name=page["name"],
        # A Page token derived from a long-lived user token does not expire.
        credentials={"access_token": identity.credentials["page_tokens"][page["id"]]},
        token_expires_at=None,
        settings={"page_id": page["id"], "connected_by": identity.remote_id},
    )
