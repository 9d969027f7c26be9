"""Live validation: a short scripted check of an adapter against the real platform, run by
an operator with a connected account, and the record that moves a platform's readiness from
`experimental` to `supported` (docs/operations.md, "Validating against the live platform")."""
