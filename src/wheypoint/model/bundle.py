"""Bundles, the pure half: a work's revision chain as exported (redacted on request), verified, and renamed.

A bundle is one canonical JSON document (canonical.py):

    {"bundle_digest": "sha256:...", "bundle_version": 1, "omitted": {...}, "works": [<work>, ...]}

where each <work> is `{"revisions": [{"record": {...}, "revision": {...}}, ...], "slug", "work_id"}`, oldest
revision first; a revision whose author is known also has `"author"`, beside the record the digests cover.
`bundle_digest` is the sha256 of the canonical bundle without that key; since the key sorts first, a writer
can stream every work and put the digest in front when it is done (app/bundle.py).

What an export leaves out unless asked, and why: operator directives (`--include-operator`) are how one person
wants an agent to talk to them, not facts about the work; local references (`--include-local`) name files on
one machine. Leaving them out changes the records, so a redacted record's `record_digest`, and its receipt's
`record_digest` and `revision_digest`, are recomputed over what is left: every digest in a bundle is true of the
bundle's own bytes, and `omitted` says what was taken out and how much. Revision ids are kept: they are derived
from the request, which the bundle does not carry.

What an import checks (`verify_chain`), in order, naming the first revision that fails: the work id and slug
agree with every record, numbers run 1, 2, 3 and each parent is the revision before, each record's digest is
the digest of the record, each receipt describes its record and its own digest holds.
"""

from __future__ import annotations

from wheypoint.model.canonical import digest
from wheypoint.model.kernel import deep_copy, revision_id_for, work_id_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

BUNDLE_VERSION = 1
OMITTABLE = ("operator_directives", "local_references")


def redact(record: Mapping[str, Any], receipt: Mapping[str, Any], *, operator: bool, local: bool,
           left_out: dict[str, set[str]]) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    """The record and receipt as exported: without operator directives and local references unless included.

    `left_out` collects what was taken out (entry ids, references), so a bundle can say how many distinct
    ones it lacks. Digests are recomputed when anything was.
    """
    out, rec = deep_copy(dict(record)), deep_copy(dict(receipt))
    changed = False
    if not operator:
        gone = {e["id"] for e in out["entries"] if e["kind"] == "operator_directive"}
        if gone:
            changed = True
            left_out.setdefault("operator_directives", set()).update(gone)
            out["entries"] = [e for e in out["entries"] if e["id"] not in gone]
            for item in (*out["artifact_links"], *out["edges"]):
                if "covers" in item:
                    item["covers"] = [c for c in item["covers"] if c not in gone]
            rec["added"] = [i for i in rec["added"] if i not in gone]
            rec["transitioned"] = [t for t in rec["transitioned"] if t["entry"] not in gone]
    if not local and out["local_references"]:
        changed = True
        local_refs = set(out["local_references"])
        left_out.setdefault("local_references", set()).update(local_refs)
        out["working_context"] = [item for item in out["working_context"] if item not in local_refs]
        out["artifact_links"] = [link for link in out["artifact_links"] if link["ref"] not in local_refs]
        out["edges"] = [edge for edge in out["edges"] if edge["ref"] not in local_refs]
        out["local_references"] = []
        rec["links_added"] = [r for r in rec["links_added"] if r not in local_refs]
        rec["links_removed"] = [r for r in rec["links_removed"] if r not in local_refs]
    if changed:
        _reseal(out, rec)
    return out, rec


def _reseal(record: dict[str, Any], receipt: dict[str, Any]) -> None:
    """Recompute the record's digest and the receipt's two digests after the record changed."""
    record.pop("record_digest", None)
    record["record_digest"] = digest(record)
    receipt["record_digest"] = record["record_digest"]
    receipt.pop("revision_digest", None)
    receipt["revision_digest"] = digest(receipt)


def verify_chain(work: Mapping[str, Any]) -> tuple[str, str] | None:
    """(revision id or position, what is wrong) for the first revision of a bundled work that fails, else None."""
    parent = None
    revisions = work.get("revisions")
    if not isinstance(revisions, list) or not revisions:
        return "work", "it has no revisions"
    for number, pair in enumerate(revisions, 1):
        record, receipt = pair.get("record"), pair.get("revision")
        if not isinstance(record, dict) or not isinstance(receipt, dict):
            return f"revision {number}", "a revision needs its record and its receipt"
        where = str(record.get("revision_id") or f"revision {number}")
        if record.get("work_id") != work.get("work_id") or record.get("slug") != work.get("slug"):
            return where, "its work id or slug is not the work's"
        if record.get("revision_number") != number or record.get("parent_revision_id") != parent:
            return where, f"it is not revision {number} following {parent or 'nothing'}"
        if record.get("work_id") != work_id_for(str(record.get("project_key")), str(record.get("slug"))):
            return where, "its work id is not the one its project and slug derive"
        body = {k: v for k, v in record.items() if k != "record_digest"}
        if digest(body) != record.get("record_digest"):
            return where, "its record_digest is not the digest of its record"
        if (receipt.get("revision_id"), receipt.get("work_id"), receipt.get("revision_number"),
                receipt.get("parent_revision_id"), receipt.get("record_digest")) != (
                record["revision_id"], record["work_id"], number, parent, record["record_digest"]):  # fmt: skip
            return where, "its receipt does not describe its record"
        if digest({k: v for k, v in receipt.items() if k != "revision_digest"}) != receipt.get("revision_digest"):
            return where, "its revision_digest is not the digest of its receipt"
        parent = record["revision_id"]
    return None


def renamed(work: Mapping[str, Any], slug: str) -> dict[str, Any]:
    """The work as it is imported under another slug: new work id, revision ids derived again, digests resealed.

    Each revision id is derived as the kernel derives it, from the new work id, the new parent revision and the
    request digest the receipt kept, so importing the same bundle under the same name twice gives the same ids.
    """
    first = work["revisions"][0]["record"]
    new_work = work_id_for(first["project_key"], slug)
    revisions = []
    parent = None
    renames: dict[str, str] = {}
    for pair in work["revisions"]:
        record, receipt = deep_copy(pair["record"]), deep_copy(pair["revision"])
        new_id = revision_id_for(new_work, parent, receipt["request_digest"])
        renames[record["revision_id"]] = new_id
        for target in (record, receipt):
            target.update(work_id=new_work, revision_id=new_id, parent_revision_id=parent)
        record["slug"] = slug
        _reseal(record, receipt)
        revisions.append({"record": record, "revision": receipt})
        parent = new_id
    return {"revisions": revisions, "slug": slug, "work_id": new_work}
