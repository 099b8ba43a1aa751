"""The SQLite backend: one store file per user (backend, its SQL, its migrations)."""
