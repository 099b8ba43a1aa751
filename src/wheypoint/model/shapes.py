"""The textual shapes of ids and names, defined once for the contract and for lookups alike."""

SLUG_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$"
WORK_ID_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?\.[0-9a-f]{8}$"
REVISION_ID_PATTERN = r"^rev-[0-9a-f]{16}$"
ENTRY_ID_PATTERN = r"^[dqbvo]-[0-9a-f]{12}$"
LABEL_PATTERN = r"^[a-z][a-z0-9_-]{0,31}$"
DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"

# The harnesses whose transcripts wheypoint reads; a record's session may also name "other".
READABLE_HARNESSES = ("claude-code", "codex", "opencode", "gemini")
