"""The health page as HTML: what `wheypoint doctor` reports, per harness, then the store and this checkout's notes."""

from __future__ import annotations

from wheypoint.web.pages import _e, layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NOTE_CODES = ("note-stale", "note-hand-edited", "note-unreadable", "note-temporary", "note-unwritable")


def _findings(title: str, items: list[dict[str, Any]], css: str) -> str:
    if not items:
        return ""
    rows = "".join(f'<li><code>{_e(item["code"])}</code> {_e(item["message"])}</li>' for item in items)
    return f'<h2>{title} ({len(items)})</h2><ul class="{css}">{rows}</ul>'


def _trusted(event: dict[str, Any], harness: str) -> str:
    if "trust" in event:
        status = event["trust"]["status"]
        return f'<span class="{"" if status == "trusted" else "bad"}">{_e(status)}</span>'
    return "yes (no trust step)" if harness != "codex" else "?"


def _scope_rows(harness: str, scope: str, place: dict[str, Any] | None) -> list[str]:
    """One row per event of one harness's file for one scope; one row saying so when it holds none of ours."""
    if place is None:
        return []
    head = f"<td>{_e(harness)}</td><td>{_e(scope)}</td><td><code>{_e(place['path'])}</code></td>"
    installed = [event for event in place["events"] if event["installed"]]
    if place.get("readable") is False:
        return [f'<tr class="hook">{head}<td colspan="3" class="bad">unreadable</td></tr>']
    if not installed:
        return [f'<tr class="hook">{head}<td colspan="3">no wheypoint hooks'
                f'{"" if place["exists"] else " (no such file)"}</td></tr>']  # fmt: skip
    rows = []
    for event in installed:
        current = "current" if event.get("current", True) else '<span class="bad">not current</span>'
        runner = "" if event.get("runner_found", True) else ' <span class="bad">(its program is missing)</span>'
        project = ""
        if "project_trusted" in place:
            project = (" · checkout trusted" if place["project_trusted"]
                       else ' · <span class="bad">checkout not trusted</span>')  # fmt: skip
        rows.append(f'<tr class="hook">{head}<td>{_e(event["event"])}</td><td>{current}{runner}</td>'
                    f"<td>{_trusted(event, harness)}{project}</td></tr>")  # fmt: skip
    return rows


def _fired(harness: str, fired: dict[str, Any]) -> str:
    if not fired:
        return f"<p>{_e(harness)}: no hook call in the log.</p>"
    items = []
    for event, facts in fired.items():
        last = facts["last"]
        did = ", ".join(f"{k} {last[k]}" for k in ("kept", "chars", "skipped", "refused", "error") if k in last)
        failing = f' · <span class="bad">{facts["failure_count"]} failure(s) since its last success</span>' \
                  if facts.get("failure_count") else ""  # fmt: skip
        items.append(f"<li>{_e(event)}: last fired {_e(last.get('at'))}, {_e(facts['calls'])} call(s)"
                     f"{': ' + _e(did) if did else ''}{failing}</li>")  # fmt: skip
    return f'<p>{_e(harness)}, last fired:</p><ul class="fired">{"".join(items)}</ul>'


def health_html(reply: dict[str, Any], live: tuple[int, str] | None = None) -> str:
    """doctor's reply: the verdict, its problems and warnings, each harness's hooks, the store, the notes."""
    problems = reply["problems"]
    verdict = "healthy" if reply["healthy"] else f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    body = [f"<h1>Health: {_e(verdict)}</h1>",
            "<p class=\"meta\">What <code>wheypoint doctor</code> finds from where this server runs; it changes "
            "nothing (<code>wheypoint doctor --fix</code> does the safe repairs).</p>",
            _findings("Problems", [p for p in problems if p["code"] not in NOTE_CODES], "problems"),
            _findings("Warnings", reply["warnings"], "warnings")]  # fmt: skip
    rows, fired = [], []
    for harness, report in reply["harnesses"].items():
        for scope in ("user", "project"):
            rows += _scope_rows(harness, scope, report.get(scope))
        fired.append(_fired(harness, report["last_fired"]))
    body.append("<h2>Harnesses</h2><table><thead><tr><th>Harness</th><th>Scope</th><th>File</th><th>Hook</th>"
                f"<th>Installed</th><th>Trusted</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
                + "".join(fired))  # fmt: skip
    store = reply["store"]
    if store.get("readable"):
        body.append(f"<h2>Store</h2><p><code>{_e(store.get('location'))}</code>: {_e(store.get('backend'))}, schema "
                    f"{_e(store.get('schema_version'))}, {_e(store.get('works', 0))} work(s), "
                    f"{_e(store.get('revisions', 0))} revision(s) verified</p>")  # fmt: skip
    else:
        body.append(f'<h2>Store</h2><p class="bad"><code>{_e(store.get("location"))}</code>: unreadable</p>')
    notes = reply["notes"]
    if notes.get("checkout"):
        body.append(f"<h2>Notes of {_e(notes['checkout'])}</h2><p>{_e(notes['current'])} current, "
                    f"{_e(notes['stale'])} stale, {_e(notes['hand_edited'])} edited by hand, {_e(notes['missing'])} "
                    f"missing, {len(notes['temporaries'])} temporar{'y' if len(notes['temporaries']) == 1 else 'ies'}"
                    "</p>" + _findings("Notes to look at", [p for p in problems if p["code"] in NOTE_CODES],
                                       "notes"))  # fmt: skip
    else:
        body.append("<h2>Notes</h2><p>This server does not run in a checkout: no notes to check.</p>")
    return layout("Health", "".join(body), live)
