"""Where wheypoint runs: the store's home, the git checkout, the project key, and file facts.

Everything here observes the world (environment, files, git) and hands plain values to the pure
parts. Git metadata is read from the repository files directly where that is simple (HEAD, refs,
config), because a checkpoint is benchmarked against interpreter start-up and each `git`
subprocess costs milliseconds; `git` itself is asked only for tracked and ignored paths.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from wheypoint.model.canonical import new_sha256

STORE_FILE = "store.sqlite3"
MAX_DIGEST_BYTES = 256 * 1024 * 1024


def store_location(environ: Mapping[str, str] | None = None) -> str:
    """The store a command uses: `$WHEYPOINT_STORE` (a URL or a path) when set, else the default SQLite file."""
    env = os.environ if environ is None else environ
    return env.get("WHEYPOINT_STORE") or str(store_path(env))


def store_path(environ: Mapping[str, str] | None = None) -> Path:
    """`$WHEYPOINT_HOME/store.sqlite3`, else the XDG data directory's `wheypoint/store.sqlite3`."""
    env = os.environ if environ is None else environ
    home = env.get("WHEYPOINT_HOME")
    if home:
        return Path(home).expanduser() / STORE_FILE
    data = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "wheypoint" / STORE_FILE


def normalise_key(text: str) -> str:
    """A project key: lowercase, runs outside [a-z0-9._-] folded to one dash, at most 96 characters."""
    key = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    return key[:96] or "default"


def key_from_remote(url: str) -> str | None:
    """`owner-repo` from a remote URL (https, ssh, scp-like or a path), or None."""
    path = re.sub(r"^[a-z+]+://[^/]*/", "", url.strip())
    path = re.sub(r"^[^/@:]+@[^:/]+:", "", path)
    parts = [p for p in re.split(r"[/:\\]+", path) if p]
    if not parts:
        return None
    parts[-1] = re.sub(r"\.git$", "", parts[-1])
    return normalise_key("-".join(parts[-2:]))


class Checkout(NamedTuple):
    """A git working tree: its top folder, the repository's common git dir, and HEAD."""

    toplevel: Path
    git_dir: Path
    common_dir: Path
    branch: str | None
    commit: str | None

    def remote_url(self, name: str = "origin") -> str | None:
        try:
            config = (self.common_dir / "config").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        section = re.search(rf'^\[remote "{re.escape(name)}"\]\s*$(.*?)(?=^\[|\Z)', config, re.M | re.S)
        if not section:
            return None
        url = re.search(r"^\s*url\s*=\s*(.+?)\s*$", section.group(1), re.M)
        return url.group(1) if url else None

    def project_key(self) -> str:
        url = self.remote_url()
        from_remote = key_from_remote(url) if url else None
        # Every worktree of one repository shares a key: name it after the main checkout.
        main = self.common_dir.parent if self.common_dir.name == ".git" else self.toplevel
        return from_remote or normalise_key(main.name)

    def git(self, *args: str, stdin: str | None = None, ok: tuple[int, ...] = (0, 1)) -> str | None:
        import subprocess  # only writes with references to classify need git itself

        try:
            done = subprocess.run(
                ["git", "-C", str(self.toplevel), *args],
                input=stdin, capture_output=True, text=True, timeout=30, check=False,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode in ok else None

    def tracked_at_head(self, paths: list[str]) -> set[str]:
        """Which of these repository-relative paths are files in the HEAD commit."""
        if not paths or not self.commit:
            return set()
        out = self.git("ls-tree", "-r", "--name-only", "-z", "HEAD", "--", *paths)
        return set(out.split("\0")) & set(paths) if out else set()

    def ignored(self, paths: list[str]) -> set[str]:
        """Which of these repository-relative paths git ignores."""
        if not paths:
            return set()
        out = self.git("check-ignore", "--stdin", "-z", "--no-index", stdin="\0".join(paths) + "\0")
        return {p for p in out.split("\0") if p} if out else set()

    def missing_objects(self, shas: list[str]) -> set[str]:
        """Which of these commit ids the repository no longer has (rewritten away, or never fetched)."""
        if not shas:
            return set()
        out = self.git("cat-file", "--batch-check", stdin="".join(f"{sha}^{{commit}}\n" for sha in shas))
        if out is None:
            return set()
        lines = out.splitlines()
        return {sha for sha, line in zip(shas, lines, strict=False) if line.endswith("missing")}

    def commits_since(self, sha: str) -> int | None:
        """How many commits HEAD has that `sha` lacks; None when `sha` is not an ancestor of HEAD."""
        if self.git("merge-base", "--is-ancestor", sha, "HEAD", ok=(0,)) is None:
            return None
        count = self.git("rev-list", "--count", f"{sha}..HEAD")
        return int(count.strip()) if count and count.strip().isdigit() else None

    def changed_since(self, sha: str, paths: list[str]) -> set[str]:
        """Which of these paths differ between `sha` and the working tree."""
        out = self.git("diff", "--name-only", "-z", sha, "--", *paths) if paths else None
        return {p for p in out.split("\0") if p} if out else set()

    def worktree_roots(self) -> list[Path]:
        """This checkout's top folder and every other worktree of its repository."""
        roots = [self.toplevel]
        listing = self.git("worktree", "list", "--porcelain", ok=(0,)) or ""
        for line in listing.splitlines():
            if line.startswith("worktree "):
                root = Path(line[len("worktree ") :])
                if root not in roots and root.is_dir():
                    roots.append(root)
        return roots

    def contains(self, path: Path) -> bool:
        try:
            path.resolve().relative_to(self.toplevel.resolve())
            return True
        except ValueError:
            return False


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _resolve_ref(common_dir: Path, git_dir: Path, ref: str) -> str | None:
    for base in (git_dir, common_dir):
        value = _read(base / ref)
        if value and re.fullmatch(r"[0-9a-f]{40,64}", value):
            return value
    packed = _read(common_dir / "packed-refs") or ""
    match = re.search(rf"^([0-9a-f]{{40,64}}) {re.escape(ref)}$", packed, re.M)
    return match.group(1) if match else None


def find_checkout(start: Path) -> Checkout | None:
    """The git working tree containing `start`, read from its files; None outside git."""
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            git_dir = dot_git
        elif dot_git.is_file():
            pointer = _read(dot_git) or ""
            if not pointer.startswith("gitdir:"):
                continue
            git_dir = (folder / pointer[len("gitdir:") :].strip()).resolve()
        else:
            continue
        common = _read(git_dir / "commondir")
        common_dir = (git_dir / common).resolve() if common else git_dir
        head = _read(git_dir / "HEAD") or ""
        if head.startswith("ref:"):
            ref = head[4:].strip()
            branch = ref.removeprefix("refs/heads/")
            commit = _resolve_ref(common_dir, git_dir, ref)
        else:
            branch, commit = None, head if re.fullmatch(r"[0-9a-f]{40,64}", head) else None
        return Checkout(folder, git_dir, common_dir, branch, commit)
    return None


def file_digest(path: Path) -> str | None:
    """`sha256:<hex>` of a regular file's bytes (None when it is not a readable file or is huge)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_DIGEST_BYTES:
            return None
        sha = new_sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
        return "sha256:" + str(sha.hexdigest())
    except OSError:
        return None
