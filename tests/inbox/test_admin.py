"""The inbox's admin pages render, with search."""

import pytest
from django.urls import reverse

from tests.inbox.test_services import comments_of

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", ["inbox_comment", "inbox_reply", "inbox_commentsync"])
def test_changelist_renders_with_search(admin_client, workspace_a, name):
    comments_of(workspace_a)
    url = reverse(f"admin:{name}_changelist")
    assert admin_client.get(url).status_code == 200
    assert admin_client.get(url, {"q": "c"}).status_code == 200
