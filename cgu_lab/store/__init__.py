"""Persistence: SQLAlchemy 2 models, the async engine and Alembic migrations.

SQLite (the embedded default) and PostgreSQL (by URL) run the same schema;
migrations live in `migrations/` and run on every controller start.
"""
