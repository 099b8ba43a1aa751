"""A work's pages as HTML: its head with links, backlinks and lineage, and the diff between two of its revisions."""

from __future__ import annotations

import json

from wheypoint.web.pages import _e, gate_section, layout, notice_html
from wheypoint.web.svg import lineage_svg

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

def _entries(record: dict[str, Any]) -> str:
    rows = []
    for entry in record.get("entries", []):
        extra = "".join(f"<div class=\"meta\">{_e(k)}: {_e(entry[k])}</div>" for k in ("quote", "rationale", "owner",
                        "when") if entry.get(k))  # fmt: skip
        settled = entry.get("settled") or {}
        if settled:
            extra += f"<div class=\"meta\">{_e(settled.get('action'))} in r{_e(settled.get('revision_number'))}: " \
                     f"{_e(settled.get('rationale'))}</div>"
        gate = " (gate)" if entry.get("gates") else ""
        rows.append(f"<tr><td>{_e(entry['kind'])}{gate}</td><td>{_e(entry['state'])}</td>"
                    f"<td>{_e(entry['text'])}{extra}</td></tr>")  # fmt: skip
    return ("<table><thead><tr><th>Kind</th><th>State</th><th>Text</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")  # fmt: skip


def revisions_table(revisions: list[dict[str, Any]]) -> str:
    rows = []
    for revision in revisions:
        added = "; ".join(f"{a['kind']}: {a['text']}" for a in revision.get("added", []))
        moved = "; ".join(f"{t['entry']} {t['action']}" for t in revision.get("transitioned", []))
        rows.append(f"<tr><td>r{_e(revision['revision_number'])}</td><td>{_e(revision['captured_at'])}</td>"
                    f"<td>{_e(revision.get('author') or '')}</td><td>{_e(added)}</td><td>{_e(moved)}</td></tr>")
    return ("<table><thead><tr><th>Revision</th><th>Captured</th><th>Author</th><th>Added</th><th>Moved</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>")  # fmt: skip


def work_html(data: dict[str, Any], csrf: str, notice: str | None = None, refused: bool = False,
              moved: list[dict[str, Any]] | None = None, live: tuple[int, str] | None = None) -> str:  # fmt: skip
    """A work's page, from its record: orientation, status, gates with their forms, entries, its links both ways,
    its lineage, revisions and the form that compares two of them."""
    record = data["record"]
    body = [notice_html(notice, refused), f"<h1>{_e(record['slug'])}</h1>",
            f"<p class=\"meta\">{_e(record['project_key'])} · {_e(record['work_id'])}"
            f" · r{_e(record['revision_number'])} · {_e(record['status'])}"
            f" · next {_e((record.get('next') or {}).get('move'))}</p>",
            f"<p>{_e(record['orientation'])}</p>"]  # fmt: skip
    if moved:
        body.append(f"<h2>What changed since the page you answered from</h2>{revisions_table(moved)}")
    if data["gates"]:
        body.append("<h2>Open gates</h2>" + "".join(gate_section(g, csrf) for g in data["gates"]))
    if record.get("notes"):
        body.append(f"<h2>Notes</h2><pre>{_e(record['notes'])}</pre>")
    body.append(f"<h2>Entries</h2>{_entries(record)}")
    if "links" in data:
        body.append(links_section(data["links"], data["backlinks"]))
    if "lineage" in data:
        body.append(lineage_section(data["lineage"]))
    body.append(f"<h2>Revisions</h2>{revisions_table(data['revisions'])}")
    numbers = [r["revision_number"] for r in data["revisions"]]
    if len(numbers) > 1:
        body.append("<h2>Compare two revisions</h2>"
                    + diff_form(record["work_id"], data["revisions"], numbers[-2], numbers[-1]))  # fmt: skip
    return layout(record["slug"], "".join(body), live)


def _work_link(item: dict[str, Any]) -> str:
    """The other work as a link to its page (with its project), or the reference as text when it is no work."""
    if not item.get("work_id"):
        return f"<code>{_e(item['ref'])}</code>"
    return (f'<a href="/work/{_e(item["work_id"])}">{_e(item["slug"])}</a> '
            f'<span class="meta">({_e(item["project"])})</span>')  # fmt: skip


def links_section(links: list[dict[str, Any]], backlinks: list[dict[str, Any]]) -> str:
    """The head's edges to other works and references, then the works whose head points at this one."""
    out = []
    for link in links:
        why = f" · {_e(link['rationale'])}" if link.get("rationale") else ""
        covers = f" · covers {_e(', '.join(link['covers']))}" if link.get("covers") else ""
        out.append(f"<li>{_e(link['kind'])} {_work_link(link)}<span class=\"meta\">{covers}{why}</span></li>")
    back = [f"<li>{_work_link(b)} {_e(b['kind'])} this work</li>" for b in backlinks]
    shown_out = f'<ul class="links">{"".join(out)}</ul>' if out else "<p>This work links to nothing.</p>"
    shown_back = f'<ul class="backlinks">{"".join(back)}</ul>' if back else "<p>No work links to this one.</p>"
    return f"<h2>Links</h2>{shown_out}<h2>Backlinks</h2>{shown_back}"


def lineage_section(lineage: dict[str, Any]) -> str:
    if not lineage["edges"]:
        return "<h2>Lineage</h2><p>No fork, split or join: this work stands alone.</p>"
    return f"<h2>Lineage</h2><figure>{lineage_svg(lineage)}</figure>"


def diff_form(work_id: str, revisions: list[dict[str, Any]], first: int | None, second: int | None) -> str:
    """A GET form choosing two revisions (it only reads, so it carries no CSRF token)."""

    def select(name: str, label: str, chosen: int | None) -> str:
        options = "".join(f'<option value="r{_e(r["revision_number"])}"'
                          + (" selected" if r["revision_number"] == chosen else "")
                          + f'>r{_e(r["revision_number"])} · {_e(r["captured_at"])}</option>'
                          for r in revisions)  # fmt: skip
        return f'<label for="d-{name}">{label}</label><select id="d-{name}" name="{name}">{options}</select>'

    return (f'<form method="get" action="/work/{_e(work_id)}/diff" class="diff">{select("from", "From", first)}'
            f'{select("to", "To", second)}<button type="submit">Show the change</button></form>')  # fmt: skip


def _value(value: Any) -> str:
    """A changed field's value as text: a string as it is, anything else as JSON."""
    if value is None or value == "" or value == {}:
        return "(none)"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _entry_rows(changes: dict[str, Any]) -> list[str]:
    entries = changes.get("entries", {})
    rows = [f'<tr class="added"><td>added</td><td>{_e(e["kind"])}</td><td>{_e(e["id"])}</td><td>{_e(e["text"])}</td>'
            f'<td>{_e(e["state"])}</td></tr>' for e in entries.get("added", [])]  # fmt: skip
    for e in entries.get("settled", []):
        how = "".join(f' · {_e(k)} {_e(e[k])}' for k in ("action", "by", "rationale") if e.get(k))
        rows.append(f'<tr><td>settled</td><td>{_e(e["kind"])}</td><td>{_e(e["id"])}</td><td>{_e(e["text"])}</td>'
                    f'<td>{_e(e["from"])} → {_e(e["to"])}{how}</td></tr>')  # fmt: skip
    for e in entries.get("moved", []):
        to = f' to <a href="/work/{_e(e["to_work"])}">{_e(e["to_work"])}</a>' if e.get("to_work") else ""
        rows.append(f'<tr><td>moved</td><td>{_e(e["kind"])}</td><td>{_e(e["id"])}</td><td>{_e(e["text"])}</td>'
                    f'<td>{_e(e["from"])} → moved{to}</td></tr>')  # fmt: skip
    rows += [f'<tr class="removed"><td>removed</td><td>{_e(e["kind"])}</td><td>{_e(e["id"])}</td>'
             f'<td>{_e(e["text"])}</td><td>{_e(e["state"])}</td></tr>' for e in entries.get("removed", [])]  # fmt: skip
    return rows


FIELD_NAMES = (("status", "Status"), ("orientation", "Orientation"), ("next", "Next move"), ("notes", "Notes"))
LIST_NAMES = (("working_context", "Working context"), ("local_references", "Local references"),
              ("artifact_links", "Artifact links"), ("edges", "Edges"))  # fmt: skip


def diff_html(data: dict[str, Any], live: tuple[int, str] | None = None) -> str:
    """What changed from one revision to another, as `wheypoint diff` reports it, under the form that chose them."""
    changes = data["changes"]
    first = f"r{data['from_number']}" if data.get("from_number") else "nothing (before its first revision)"
    title = f"{data['slug']}: {first} → r{data['to_number']}"
    body = [f'<h1><a href="/work/{_e(data["work_id"])}">{_e(data["slug"])}</a>: what changed</h1>',
            f"<p class=\"meta\">From {_e(first)} to r{_e(data['to_number'])}</p>",
            diff_form(data["work_id"], data["revisions"], data.get("from_number"), data["to_number"])]  # fmt: skip
    shown = 0
    rows = _entry_rows(changes)
    if rows:
        shown += len(rows)
        body.append("<h2>Entries</h2><table><thead><tr><th>Change</th><th>Kind</th><th>Id</th><th>Text</th>"
                    f"<th>State</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")  # fmt: skip
    fields = [f"<tr><th>{label}</th><td class=\"removed\"><pre>{_e(_value(changes[key]['from']))}</pre></td>"
              f"<td class=\"added\"><pre>{_e(_value(changes[key]['to']))}</pre></td></tr>"
              for key, label in FIELD_NAMES if key in changes]  # fmt: skip
    if fields:
        shown += len(fields)
        body.append("<h2>Fields</h2><table><thead><tr><th>Field</th><th>Was</th><th>Is</th></tr></thead>"
                    f"<tbody>{''.join(fields)}</tbody></table>")  # fmt: skip
    for key, label in LIST_NAMES:
        if key in changes:
            items = [f'<li class="added">+ {_e(i)}</li>' for i in changes[key]["added"]]
            items += [f'<li class="removed">− {_e(i)}</li>' for i in changes[key]["removed"]]
            shown += len(items)
            body.append(f"<h2>{label}</h2><ul>{''.join(items)}</ul>")
    if changes.get("meat_added"):
        shown += 1
        body.append(f"<h2>Turns kept</h2><p>{_e(', '.join(str(t) for t in changes['meat_added']))}</p>")
    if not shown:
        body.append("<p>Nothing changed between these two revisions.</p>")
    return layout(title, "".join(body), live)
