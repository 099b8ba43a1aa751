"""Front door: the harnesses' hooks (run at compaction and session start) and installing them into settings."""
