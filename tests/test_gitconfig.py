"""Reading git's config files without git: the same answers as `git config --get`, and git asked when it must."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import Runner, make_repo
from wheypoint.app.gitconfig import files, lookup, value

CONFIGS = [
    "[user]\n\temail = ann@example.com\n",
    '[user]\n\temail = "quoted@example.com" ; a comment\n',
    "[User]\n  EMAIL=case@example.com # comment\n[core]\n\temail = not-this@example.com\n",
    "[user]\n\temail = first@example.com\n[other]\n\tx = 1\n[user]\n\temail = last@example.com\n",
    '[remote "origin"]\n\turl = git@example.com:acme/shop.git\n[user]\n\tname = Ann\n',
    '[user]\n\temail = "with \\"quote\\" and \\\\ slash"\n',
    "# only a comment\n",
]


@pytest.mark.parametrize("text", CONFIGS)
def test_a_value_reads_as_git_reads_it(tmp_path: Path, text: str) -> None:
    config = tmp_path / "config"
    config.write_text(text, encoding="utf-8")
    for section, sub, key in (("user", None, "email"), ("remote", "origin", "url")):
        name = f"{section}.{sub}.{key}" if sub else f"{section}.{key}"
        done = subprocess.run(["git", "config", "--file", str(config), "--get", name], capture_output=True, text=True,
                              check=False)  # fmt: skip
        expected = done.stdout.rstrip("\n") if done.returncode == 0 else None
        assert value(text, section, sub, key) == expected, (text, name)


def test_the_repository_wins_over_the_global_file_and_includes_send_us_to_git(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\temail = global@example.com\n")
    repo = make_repo(tmp_path / "repo")  # its own config names test@example.invalid
    env = {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    assert lookup(env, files(env, str(repo / ".git")), "user", None, "email") == ("test@example.invalid", False)
    assert lookup(env, files(env, None), "user", None, "email") == ("global@example.com", False)
    (home / ".gitconfig").write_text("[include]\n\tpath = other\n")
    assert lookup(env, files(env, None), "user", None, "email") == (None, True)
    assert lookup({**env, "GIT_CONFIG_COUNT": "1"}, files(env, None), "user", None, "email") == (None, True)


def test_an_included_email_is_found_through_git(wp: Runner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "identity").write_text("[user]\n\temail = included@example.com\n")
    (home / ".gitconfig").write_text("[include]\n\tpath = identity\n")
    repo = make_repo(tmp_path / "repo")
    subprocess.run(["git", "-C", str(repo), "config", "--unset", "user.email"], check=True)
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    done = wp("checkpoint", "who", "--orientation", "o", "--next", "hold", "--notes", "n", "--no-note", cwd=repo,
              env=env)  # fmt: skip
    assert done.code == 0, done.stdout
    assert wp("log", "who", cwd=repo, env=env).json["revisions"][0]["author"] == "included@example.com"
