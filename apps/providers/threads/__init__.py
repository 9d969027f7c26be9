"""Threads (Meta): container publishing, reply chains, carousels, long-lived tokens."""
