"""Where wheypoint runs: the store's home, the git checkout, the project key, and file facts.

Everything here observes the world (environment, files, git) and hands plain values to the pure
parts. Git metadata is read from the repository files directly where that is simple (HEAD, refs,
config), because a checkpoint is benchmarked against interpreter start-up and each `git`
subprocess costs milliseconds; `git` itself is asked only for tracked and ignored paths.
"""

from __future__ import annotations

import os

from wheypoint.model.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

STORE_FILE = "store.sqlite3"
MAX_DIGEST_BYTES = 256 * 1024 * 1024


def store_location(environ: Mapping[str, str] | None = None) -> str:
    """The store a command uses: `$WHEYPOINT_STORE` (a URL or a path) when set, else the default SQLite file."""
    env = os.environ if environ is None else environ
    return env.get("WHEYPOINT_STORE") or store_path(env)


def store_path(environ: Mapping[str, str] | None = None) -> str:
    """`$WHEYPOINT_HOME/store.sqlite3`, else the XDG data directory's `wheypoint/store.sqlite3`."""
    env = os.environ if environ is None else environ
    home = env.get("WHEYPOINT_HOME")
    if home:
        return os.path.join(os.path.expanduser(home), STORE_FILE)
    data = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(os.path.expanduser(data), "wheypoint", STORE_FILE)


# The parsing below uses string methods rather than regular expressions: every command computes a project
# key, and compiling the half-dozen patterns this would take costs about a millisecond of each start.
_KEY_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")
_HEX = frozenset("0123456789abcdef")


def normalise_key(text: str) -> str:
    """A project key: lowercase, runs outside [a-z0-9._-] folded to one dash, at most 96 characters."""
    out: list[str] = []
    in_run = False
    for ch in text.lower():
        if ch in _KEY_CHARACTERS:
            out.append(ch)
            in_run = False
        elif not in_run:
            out.append("-")
            in_run = True
    key = "".join(out).strip("-.")
    return key[:96] or "default"


def key_from_remote(url: str) -> str | None:
    """`owner-repo` from a remote URL (https, ssh, scp-like or a path), or None."""
    path = url.strip()
    scheme, sep, rest = path.partition("://")
    if sep and scheme and all(ch in "abcdefghijklmnopqrstuvwxyz+" for ch in scheme) and "/" in rest:
        path = rest.split("/", 1)[1]  # scheme://host/owner/repo: drop the scheme and the host
    at = path.find("@")
    if at > 0 and not any(ch in "/:" for ch in path[:at]):  # scp-like user@host:owner/repo
        host = path[at + 1 :]
        stops = [index for index in (host.find(":"), host.find("/")) if index >= 0]
        if stops and min(stops) > 0 and host[min(stops)] == ":":
            path = host[min(stops) + 1 :]
    parts = [part for part in path.replace(":", "/").replace("\\", "/").split("/") if part]
    if not parts:
        return None
    parts[-1] = parts[-1].removesuffix(".git")
    return normalise_key("-".join(parts[-2:]))


def is_object_id(text: str) -> bool:
    """Whether a text is a full git object id (40 hex digits for SHA-1, 64 for SHA-256), lowercase."""
    return 40 <= len(text) <= 64 and _HEX.issuperset(text)


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies under it, after resolving symbolic links and `..`."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


class Checkout(Record):
    """A git working tree: its top folder, the repository's common git dir, and HEAD (all paths absolute)."""

    toplevel: str
    git_dir: str
    common_dir: str
    branch: str | None
    commit: str | None

    def remote_url(self, name: str = "origin") -> str | None:
        from wheypoint.app.gitconfig import value

        return value(_read(os.path.join(self.common_dir, "config"), strip=False) or "", "remote", name, "url")

    def project_key(self) -> str:
        url = self.remote_url()
        from_remote = key_from_remote(url) if url else None
        # Every worktree of one repository shares a key: name it after the main checkout.
        main = os.path.dirname(self.common_dir) if os.path.basename(self.common_dir) == ".git" else self.toplevel
        return from_remote or normalise_key(os.path.basename(main))

    def git(self, *args: str, stdin: str | None = None, ok: tuple[int, ...] = (0, 1)) -> str | None:
        """git's output for a command run in this checkout, when it exits with one of `ok`; else None."""
        return self.git_later(*args, stdin=stdin, ok=ok)()

    def git_later(self, *args: str, stdin: str | None = None, ok: tuple[int, ...] = (0, 1)) -> Callable[[], str | None]:
        """`git`, set running now and answered when the function returned is called (git runs meanwhile; the
        function may be called again and gives the same answer)."""
        from wheypoint.app.gitrun import start_git  # only commands that classify references or check history

        started = start_git(list(args), self.toplevel, (stdin or "").encode("utf-8"))

        def output() -> str | None:
            done = started.answer()
            if done is None or done[0] not in ok:
                return None
            return done[1].decode("utf-8", errors="replace")

        return output

    def tracked_at_head_later(self, paths: list[str]) -> Callable[[], set[str]]:
        """Which of these repository-relative paths are files in the HEAD commit: asked of git now, answered when
        the function returned is called (see `git_later`)."""
        if not paths or not self.commit:
            return set
        output = self.git_later("ls-tree", "-r", "--name-only", "-z", "HEAD", "--", *paths)

        def tracked() -> set[str]:
            out = output()
            return set(out.split("\0")) & set(paths) if out else set()

        return tracked

    def ignored(self, paths: list[str]) -> set[str]:
        """Which of these repository-relative paths git ignores.

        `git check-ignore` fails for the whole batch when one path lies outside the repository, which would
        hide every ignored path of the batch. So a path that leaves the repository (`../x`) is not asked
        about (it is a local reference already), and if the batch still fails, each path is asked alone.
        """
        inside = [p for p in paths if not _leaves(p)]
        if not inside:
            return set()
        found = self._check_ignore(inside)
        if found is not None:
            return found
        return {p for p in inside if self._check_ignore([p])}

    def _check_ignore(self, paths: list[str]) -> set[str] | None:
        """The ignored ones among `paths`, or None when git could not answer for the batch."""
        out = self.git("check-ignore", "--stdin", "-z", "--no-index", stdin="\0".join(paths) + "\0", ok=(0, 1))
        if out is None:
            return None
        return {p for p in out.split("\0") if p}

    def missing_objects_later(self, shas: list[str]) -> Callable[[], set[str]]:
        """Which of these commit ids the repository no longer has (rewritten away, or never fetched): asked now,
        answered when called (see `git_later`)."""
        if not shas:
            return set
        output = self.git_later("cat-file", "--batch-check", stdin="".join(f"{sha}^{{commit}}\n" for sha in shas))

        def missing() -> set[str]:
            out = output()
            lines = out.splitlines() if out is not None else []
            return {sha for sha, line in zip(shas, lines, strict=False) if line.endswith("missing")}

        return missing

    def history_since_later(self, sha: str) -> Callable[[], tuple[int, int] | None]:
        """(commits HEAD has that `sha` lacks, commits `sha` has that HEAD lacks), in one git call asked now and
        answered when called (see `git_later`). The second number is 0 exactly when `sha` is an ancestor of HEAD.
        None when git cannot say."""
        output = self.git_later("rev-list", "--left-right", "--count", f"HEAD...{sha}", ok=(0,))

        def history() -> tuple[int, int] | None:
            out = output()
            parts = out.split() if out else []
            if len(parts) != 2 or not all(part.isdigit() for part in parts):
                return None
            return int(parts[0]), int(parts[1])

        return history

    def changed_since_later(self, sha: str, paths: list[str]) -> Callable[[], set[str]]:
        """Which of these paths differ between `sha` and the working tree: asked now, answered when called (see
        `git_later`)."""
        if not paths:
            return set
        output = self.git_later("diff", "--name-only", "-z", sha, "--", *paths)

        def changed() -> set[str]:
            out = output()
            return {p for p in out.split("\0") if p} if out else set()

        return changed

    def worktree_roots(self) -> list[str]:
        """This checkout's top folder and every other worktree of its repository, read from the git files.

        Each linked worktree has `<common dir>/worktrees/<name>/gitdir`, naming its `.git` file; the main
        worktree is the common dir's parent when that is a `.git` folder.
        """
        roots = [self.toplevel]
        if os.path.basename(self.common_dir) == ".git":
            main = os.path.dirname(self.common_dir)
            if main not in roots and os.path.isdir(main):
                roots.append(main)
        folder = os.path.join(self.common_dir, "worktrees")
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            names = []
        for name in names:
            pointer = _read(os.path.join(folder, name, "gitdir"))
            root = os.path.dirname(pointer) if pointer else None
            if root and root not in roots and os.path.isdir(root):
                roots.append(root)
        return roots

    def contains(self, path: str) -> bool:
        return inside(path, self.toplevel)


def _read(path: str, strip: bool = True) -> str | None:
    """A git file's text, None when it cannot be read; a FIFO or device planted in a clone is never waited on."""
    from wheypoint.model.regular import open_regular

    try:
        with open_regular(path) as handle:
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    return text.strip() if strip else text


def _resolve_ref(common_dir: str, git_dir: str, ref: str) -> str | None:
    for base in (git_dir, common_dir):
        value = _read(os.path.join(base, ref))
        if value and is_object_id(value):
            return value
    for line in (_read(os.path.join(common_dir, "packed-refs")) or "").split("\n"):
        sha, _, name = line.partition(" ")
        if name == ref and is_object_id(sha):
            return sha
    return None


def find_checkout(start: str) -> Checkout | None:
    """The git working tree containing the folder `start`, read from its files; None outside git."""
    found = checkout_root(start)
    return _checkout(*found) if found is not None else None


def checkout_root(start: str) -> tuple[str, str] | None:
    """(top folder, git folder) of the git working tree containing the folder `start`, None outside git: where
    `find_checkout` looks, without reading the checkout's HEAD."""
    folder = os.path.abspath(start)
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            return folder, dot_git
        if os.path.isfile(dot_git):
            pointer = _read(dot_git) or ""
            if pointer.startswith("gitdir:"):
                return folder, os.path.realpath(os.path.join(folder, pointer[len("gitdir:") :].strip()))
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _checkout(folder: str, git_dir: str) -> Checkout:
    common = _read(os.path.join(git_dir, "commondir"))
    common_dir = os.path.realpath(os.path.join(git_dir, common)) if common else git_dir
    head = _read(os.path.join(git_dir, "HEAD")) or ""
    if head.startswith("ref:"):
        ref = head[4:].strip()
        branch: str | None = ref.removeprefix("refs/heads/")
        commit = _resolve_ref(common_dir, git_dir, ref)
    else:
        branch, commit = None, head if is_object_id(head) else None
    return Checkout(folder, git_dir, common_dir, branch, commit)


def file_digest(path: str) -> str | None:
    """`sha256:<hex>` of a regular file's bytes (None when it is not a readable file or is huge)."""
    from wheypoint.model.canonical import new_sha256  # only the commands that pin or check links hash files

    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_DIGEST_BYTES:
            return None
        sha = new_sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
        return "sha256:" + str(sha.hexdigest())
    except OSError:
        return None


def _leaves(path: str) -> bool:
    """Whether a repository-relative path points outside the repository (or is not relative at all)."""
    normal = os.path.normpath(path)
    return os.path.isabs(normal) or normal == ".." or normal.startswith(".." + os.sep)
