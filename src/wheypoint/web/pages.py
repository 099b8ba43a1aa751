"""The server's pages as HTML: every text from the store escaped, no script, one in-memory style sheet."""

from __future__ import annotations

import calendar
import time
from html import escape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

STYLE = """\
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 60rem; padding: 1rem; color: #1b1b1b; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; } h3 { font-size: 1rem; }
section.gate { border: 1px solid #bbb; border-radius: 6px; padding: .5rem 1rem; margin: 1rem 0; }
.meta { color: #555; font-size: .9rem; } .notice { background: #eef6ee; padding: .5rem 1rem; }
.refused { background: #fbeaea; padding: .5rem 1rem; } pre { white-space: pre-wrap; }
label { display: block; margin-top: .5rem; font-weight: 600; } textarea { width: 100%; min-height: 3rem; }
button { margin-top: .5rem; padding: .3rem 1rem; } a:focus, button:focus, textarea:focus { outline: 3px solid #36c; }
table { border-collapse: collapse; } td, th { text-align: left; padding: .2rem .6rem; vertical-align: top; }
nav a { margin-right: 1rem; } .pager { margin: 1rem 0; } select:focus, input:focus { outline: 3px solid #36c; }
svg.lineage { max-width: 100%; height: auto; font: 13px system-ui, sans-serif; }
svg.lineage .node.gated rect { fill: #fde2e1; stroke: #c0392b; } svg.lineage .node.current rect { stroke-width: 3; }
svg.lineage .status, svg.lineage .edge-label { fill: #555; font-size: 11px; } svg.lineage a:focus rect { stroke: #36c; }
.added { background: #eef6ee; } .removed { background: #fbeaea; } .bad { color: #a11; font-weight: 600; }
"""


def _e(value: object) -> str:
    """Text for HTML: every character that could open markup or end an attribute is escaped."""
    return escape("" if value is None else str(value), quote=True)


def layout(title: str, body: str, live: tuple[int, str] | None = None) -> str:
    """A whole page; `live` (the store version it was drawn from, its own GET address) makes it run /live.js."""
    head = ""
    if live is not None:
        version, address = live
        head = (f'<meta name="wheypoint-version" content="{_e(version)}">'
                f'<meta name="wheypoint-page" content="{_e(address)}"><script src="/live.js" defer></script>')
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{_e(title)} · wheypoint</title><link rel="stylesheet" href="/style.css">{head}</head>'
            f'<body><nav><a href="/">Inbox</a><a href="/health">Health</a></nav>{body}</body></html>\n')  # fmt: skip


def age(since: str, now: float | None = None) -> str:
    """How long ago an ISO 8601 UTC time was, in the largest whole unit (`3 h`)."""
    try:
        then = calendar.timegm(time.strptime(since[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return "?"
    seconds = max(0, int((time.time() if now is None else now) - then))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def message_page(title: str, text: str) -> str:
    return layout(title, f"<h1>{_e(title)}</h1><p>{_e(text)}</p>")


def _dossier(forks: list[dict[str, Any]]) -> str:
    parts = []
    for fork in forks:
        options = []
        for option in fork.get("options", []):
            evidence = "".join(f"<li>{_e(item)}</li>" for item in option.get("evidence", []))
            breaks = f"<div>Breaks: {_e(option['breaks'])}</div>" if option.get("breaks") else ""
            options.append(f"<li><strong>{_e(option['option'])}</strong>{breaks}"
                           + (f"<div>Evidence:</div><ul>{evidence}</ul>" if evidence else "") + "</li>")
        leaning = f"<p>Prior leaning: {_e(fork['prior_leaning'])}</p>" if fork.get("prior_leaning") else ""
        parts.append(f"<h4>Dossier: {_e(fork['fork'])}</h4><ol>{''.join(options)}</ol>{leaning}")
    return "".join(parts)


def _directives(directives: list[dict[str, Any]]) -> str:
    if not directives:
        return ""
    items = "".join(f"<li>{_e(d['text'])}" + (f" (“{_e(d['quote'])}”)" if d.get("quote") else "") + "</li>"
                    for d in directives)  # fmt: skip
    return f"<h4>Directives in force</h4><ul>{items}</ul>"


def answer_form(gate: dict[str, Any], csrf: str) -> str:
    """The form that answers one gate: the question inside it, the head it was drawn from as the base."""
    key = f"{gate['work_id']}-{gate['entry_id']}"
    return (f'<form method="post" action="/answer"><p class="question">{_e(gate["text"])}</p>'
            f'<input type="hidden" name="csrf" value="{_e(csrf)}">'
            f'<input type="hidden" name="work_id" value="{_e(gate["work_id"])}">'
            f'<input type="hidden" name="entry" value="{_e(gate["entry_id"])}">'
            f'<input type="hidden" name="base" value="{_e(gate["revision_id"])}">'
            f'<label for="a-{_e(key)}">Answer</label><textarea id="a-{_e(key)}" name="answer" required></textarea>'
            f'<label for="r-{_e(key)}">Reason</label><textarea id="r-{_e(key)}" name="reason" required></textarea>'
            '<button type="submit">Record the answer</button></form>')  # fmt: skip


def gate_section(gate: dict[str, Any], csrf: str, now: float | None = None) -> str:
    owner = f" · owner {_e(gate['owner'])}" if gate.get("owner") else ""
    when = f" · when {_e(gate['when'])}" if gate.get("when") else ""
    why = f"<p>{_e(gate['rationale'])}</p>" if gate.get("rationale") else ""
    return (f'<section class="gate"><h3><a href="/work/{_e(gate["work_id"])}">{_e(gate["slug"])}</a> '
            f'<span class="meta">({_e(gate["project"])}, r{_e(gate["revision_number"])})</span></h3>'
            f'<p class="meta">{_e(gate["kind"])} open {_e(age(gate["since"], now))}{owner}{when}</p>{why}'
            f'{_dossier(gate["dossier"])}{_directives(gate["directives"])}{answer_form(gate, csrf)}'
            '</section>')  # fmt: skip


def _works_table(works: list[dict[str, Any]]) -> str:
    rows = "".join(f'<tr><td><a href="/work/{_e(w["work_id"])}">{_e(w["slug"])}</a></td><td>{_e(w["project"])}</td>'
                   f'<td>{_e(w["status"])}</td><td>{_e(w["next"])}</td><td>{_e(w["orientation"])}</td>'
                   f'<td>{_e(w["updated_at"])}</td></tr>' for w in works)  # fmt: skip
    return ("<table><thead><tr><th>Work</th><th>Project</th><th>Status</th><th>Next</th><th>Orientation</th>"
            f"<th>Updated</th></tr></thead><tbody>{rows}</tbody></table>")  # fmt: skip


def notice_html(notice: str | None, refused: bool = False) -> str:
    return f'<p class="{"refused" if refused else "notice"}" role="status">{_e(notice)}</p>' if notice else ""


FILTER_LABELS = (("project", "Project"), ("status", "Status"), ("next", "Next move"), ("owner", "Owner"),
                 ("grep", "Text"))  # fmt: skip


def filter_form(chosen: dict[str, list[str]]) -> str:
    """A GET form of list's filters (it only reads, so it carries no CSRF token)."""
    fields = "".join(f'<label for="f-{name}">{label}</label><input id="f-{name}" name="{name}" '
                     f'value="{_e((chosen.get(name) or [""])[0])}">' for name, label in FILTER_LABELS)  # fmt: skip
    return f'<form method="get" action="/" class="filters">{fields}<button type="submit">Filter</button></form>'


def inbox_address(filters: dict[str, list[str]], gate_page: int = 1, page: int = 1) -> str:
    """The inbox's GET address with these filters and pages (a first page is left out)."""
    from urllib.parse import urlencode

    pairs = [(name, value) for name, values in filters.items() for value in values]
    pairs += [(name, str(number)) for name, number in (("gate_page", gate_page), ("page", page)) if number > 1]
    return "/?" + urlencode(pairs) if pairs else "/"


def pager(what: str, number: int, per_page: int, total: int, link: Callable[[int], str]) -> str:
    """Where page `number` sits in a list of `total`, and links to the pages before and after it: nothing that is
    not on the page goes unsaid. Empty when the whole list fits on its first page."""
    last = max(1, -(-total // per_page))
    if number == 1 and total <= per_page:
        return ""
    first = (number - 1) * per_page
    if first >= total:
        return (f'<p class="pager">No {what} on page {number}: the {total:,} {what} are on pages 1–{last}. '
                f'<a href="{_e(link(last))}">Page {last}</a></p>')  # fmt: skip
    upto = min(total, number * per_page)
    parts = [f"{what.capitalize()} {first + 1:,}–{upto:,} of {total:,} (page {number} of {last})"]
    if number > 1:
        parts.append(f'<a href="{_e(link(number - 1))}" rel="prev">previous page</a>')
    if upto < total:
        parts.append(f'<a href="{_e(link(number + 1))}" rel="next">{total - upto:,} more {what} — next page</a>')
    return f'<p class="pager">{" · ".join(parts)}</p>'


def inbox_page(data: dict[str, Any], csrf: str, now: float | None = None, live: tuple[int, str] | None = None) -> str:
    """One page of the inbox: its gates under a pager, then its works by status under theirs."""
    gates, count, filters = data["gates"], data["gate_count"], data.get("filters") or {}
    gate_page, page = data["gate_page"], data["page"]
    body = [f"<h1>Inbox: {count:,} open gate{'s' if count != 1 else ''}</h1>", filter_form(filters)]
    gate_pager = pager("gates", gate_page, data["gates_per_page"], count,
                       lambda n: inbox_address(filters, n, page))  # fmt: skip
    body.append(gate_pager)
    body += [gate_section(gate, csrf, now) for gate in gates] or ([] if count else
                                                                   ["<p>No gate is waiting on a person.</p>"])
    if len(gates) > 3:
        body.append(gate_pager)  # under a long list too, where the reader ends up
    body.append(pager("works", page, data["works_per_page"], data["work_count"],
                      lambda n: inbox_address(filters, gate_page, n)))  # fmt: skip
    for group, works in data["works"].items():
        if works:
            body.append(f"<h2>{_e(group)} ({len(works)})</h2>{_works_table(works)}")
    return layout("Inbox", "".join(body), live)
