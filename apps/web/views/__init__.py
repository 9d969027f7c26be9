"""Web pages, one module per area (accounts, composer, calendar, publications...)."""
