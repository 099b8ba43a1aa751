"""The PostgreSQL backend: one store a team shares (backend, connection facts, schema and migrations)."""
