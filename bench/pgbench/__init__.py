"""The PostgreSQL benchmark's parts and the pieces they share, run through bench/pg_bench.py."""
