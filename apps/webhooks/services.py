"""What other apps call on outgoing webhooks (DESIGN.md §3: apps talk through services).

Each write lives in the module of its idea: endpoints.py (endpoints and their secrets),
outbox.py (recording events, queueing and redelivering deliveries, pruning), delivery.py
(sending, signing, retries), notices.py (telling admins an endpoint was switched off).
"""

from apps.webhooks.endpoints import (
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_previous_secret_until,
    webhook_endpoint_rotate_secret,
    webhook_endpoint_secret,
    webhook_endpoint_signing_secrets,
    webhook_endpoint_update,
    webhook_secrets_rotate_keys,
)
from apps.webhooks.outbox import (
    emit_lazy,
    webhook_emit,
    webhook_redeliver,
    webhook_send_test,
    webhooks_prune,
)

__all__ = [
    "emit_lazy",
    "webhook_emit",
    "webhook_endpoint_create",
    "webhook_endpoint_delete",
    "webhook_endpoint_previous_secret_until",
    "webhook_endpoint_rotate_secret",
    "webhook_endpoint_signing_secrets",
    "webhook_endpoint_secret",
    "webhook_endpoint_update",
    "webhook_redeliver",
    "webhook_secrets_rotate_keys",
    "webhook_send_test",
    "webhooks_prune",
]
