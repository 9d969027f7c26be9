"""The composer: its draft (form state), live checks, and submission to the services."""
