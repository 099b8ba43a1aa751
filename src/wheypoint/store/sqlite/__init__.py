"""The SQLite backend: one store file per user (backend, its full-text indexes, its schema and migrations)."""
