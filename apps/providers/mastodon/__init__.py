"""Mastodon: per-instance app registration, OAuth, statuses with media, reply-chain threads,
Idempotency-Key on every create, reconciliation by listing the account's statuses."""
