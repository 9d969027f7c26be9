"""Web forms, one module per area. They parse and validate input; services write."""
