"""Whether Codex trusts wheypoint's hooks: the key and hash Codex files a hook's trust under, and its verdict.

Codex runs a hook from a hooks.json only once the person trusted it (in the TUI's /hooks), and `codex exec`
skips an untrusted one without a word. Trusting writes, to the user's `$CODEX_HOME/config.toml` (else
`~/.codex/config.toml`; no other layer may hold it), a table `[hooks.state."<key>"]` with `trusted_hash`, and
`enabled = false` when the person turned the hook off. As Codex computes them (openai/codex
codex-rs/hooks/src/engine/discovery.rs, `append_matcher_groups` and `command_hook_hash`; the hash is
codex-rs/config's `version_for_toml`), checked against the `currentHash` and `trustStatus` that Codex 0.171's
own `hooks/list` (its app-server) reports for the same files (tests/test_doctor.py):

- key: `<absolute path of the hooks.json>:<event in snake case>:<matcher group index>:<handler index>`;
- hash: `sha256:` and the SHA-256 hex of the compact JSON, keys sorted, of `{"event_name": <snake case>,
  "matcher"?: <the group's matcher, for the events that take one>, "hooks": [{"type": "command", "command",
  "timeout": <seconds, 600 when unset, at least 1>, "async": <false unless set>, "statusMessage"?}]}`;
- verdict: `trusted` when the stored hash is the current one, `modified` when it differs (the hook changed
  since it was trusted), `untrusted` when none is stored; `disabled` when `enabled = false`.
"""

from __future__ import annotations

import json
import os

from wheypoint.model.canonical import sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Codex's event names in keys and hashes (codex-rs/hooks `hook_event_key_label`).
SNAKE = {
    "PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request", "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact", "PostCompact": "post_compact", "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit", "Stop": "stop",
}  # fmt: skip
# The events whose matcher counts (codex-rs/hooks events/common.rs `matcher_pattern_for_event`): not these two.
NO_MATCHER = ("UserPromptSubmit", "Stop")
DEFAULT_TIMEOUT = 600  # seconds, when the handler gives none


def hook_key(hooks_file: str, event: str, group: int, index: int) -> str:
    """The key of a hook's trust in config.toml's `[hooks.state]`."""
    return f"{os.path.abspath(hooks_file)}:{SNAKE.get(event, event)}:{group}:{index}"


def hook_hash(event: str, group: dict[str, Any], handler: dict[str, Any]) -> str:
    """The hash Codex compares with a hook's `trusted_hash` (see the module's docstring)."""
    timeout = handler.get("timeout")
    seconds = timeout if isinstance(timeout, int) and not isinstance(timeout, bool) else DEFAULT_TIMEOUT
    normal: dict[str, Any] = {"type": "command", "command": handler.get("command"), "timeout": max(1, seconds),
                              "async": handler.get("async") is True}  # fmt: skip
    if isinstance(handler.get("statusMessage"), str):
        normal["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": SNAKE.get(event, event), "hooks": [normal]}
    matcher = group.get("matcher")
    if isinstance(matcher, str) and event not in NO_MATCHER:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + sha256_hex(text.encode("utf-8"))


def hook_states(config: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """`[hooks.state]` of a parsed config.toml, by key (trimmed, as Codex reads them); entries of another shape
    are passed over, as Codex passes them over."""
    hooks = (config or {}).get("hooks")
    states = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(states, dict):
        return {}
    return {key.strip(): value for key, value in states.items() if isinstance(value, dict) and key.strip()}


def verdict(state: dict[str, Any] | None, current: str) -> str:
    """trusted, modified, untrusted or disabled (see the module's docstring)."""
    if state is not None and state.get("enabled") is False:
        return "disabled"
    trusted = state.get("trusted_hash") if state is not None else None
    if not isinstance(trusted, str):
        return "untrusted"
    return "trusted" if trusted == current else "modified"


def config_path(codex_folder: str) -> str:
    """The user's config.toml, beside the user's hooks.json (`$CODEX_HOME`, else ~/.codex)."""
    return os.path.join(codex_folder, "config.toml")
