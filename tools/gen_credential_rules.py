"""Generate src/wheypoint/model/credential_rules.py from the vendored gitleaks rule set (Go RE2 to Python re)."""

# Run from the repository root (Python 3.11+, for tomllib):
#
#     python3 tools/gen_credential_rules.py            # rewrite the module
#     python3 tools/gen_credential_rules.py --check    # exit 1 when the module is out of date
#
# To refresh the rules, replace tools/credential-rules/gitleaks.toml with a newer config/gitleaks.toml
# from github.com/gitleaks/gitleaks (MIT, licence beside it), update GITLEAKS_COMMIT below and run this.
#
# The runtime is standard library only and must not parse TOML at start-up, so the rules are turned
# into a plain Python data module here, once.  Go's RE2 and Python's re differ; translate() rewrites
# what has a Python equivalent and every rule whose pattern still fails to compile is listed in the
# module's SKIPPED table with the reason, as are the rules left out on purpose (EXCLUDED).

from __future__ import annotations

import argparse
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tools" / "credential-rules" / "gitleaks.toml"
TARGET = ROOT / "src" / "wheypoint" / "model" / "credential_rules.py"
GITLEAKS_COMMIT = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b"

# Rules left out on purpose, with the reason written into the generated module.
EXCLUDED = {
    "generic-api-key": "superseded by wheypoint's high-entropy-assignment, whose word test was tuned on real "
    "prompts; this rule's entropy-only test fires on identifiers in prose",
    "jwt": "wheypoint's own jwt rule decodes header and payload (and knows the jwt.io sample); this one would "
    "report the base64 strings that rule has judged not to be tokens",
    "pkcs12-file": "matches file names only; wheypoint scans text, never files",
    "freemius-secret-key": "applies only inside .php files; wheypoint scans text with no file name",
    "hashicorp-tf-password": "applies only inside .tf/.hcl files; wheypoint scans text with no file name",
    "kubernetes-secret-yaml": "applies only inside .yaml files; wheypoint scans text with no file name",
    "nuget-config-password": "applies only inside nuget.config; wheypoint scans text with no file name",
}

# gitleaks builds its "NAME = value" rules from one template.  The leading [\w.-]{0,50}? only widens the
# match to the left of the keyword (the secret is a capture group), and the operator list admits no prose,
# so such rules are rewritten: no left widening, and a keyword phrase followed by a space also introduces
# the value ("the mailgun key is key-..."), since people paste credentials into sentences.
_SEMI_GENERIC = re.compile(
    r"^\(\?i\)\[\\w\.-\]\{0,50\}\?(?P<kw>\(\?:.*?\))\(\?:\[ \\t\\w\.-\]\{0,20\}\)\[\\s'\"\]\{0,3\}"
    r"\(\?:=\|>\|:\{1,3\}=\|\\\|\\\|\|:\|=>\|\\\?=\|,\)\[\\x60'\"\\s=\]\{0,5\}(?P<rest>.*)$"
)
_PROSE_OPERATORS = r"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,|(?<=\s))"


def _semi_generic_out(m: re.Match[str]) -> str:
    return "(?i)" + m["kw"] + r"(?:[ \t\w.-]{0,20})[\s'\"]{0,3}" + _PROSE_OPERATORS + r"[\x60'\"\s=]{0,5}" + m["rest"]


# The usual end of a gitleaks value: a quote, space, ';' or end of text.  In a sentence the value is also
# followed by '.', ',', ')' and the like, so those end it too.
_TERMINATOR = "(?:[\\x60'\"\\s;]|\\\\[nr]|$)"
_TERMINATOR_OUT = "(?:[\\x60'\"\\s;.,:!?)\\]}>|]|\\\\[nr]|$)"

_POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "xdigit": "0-9a-fA-F",
    "upper": "A-Z",
    "lower": "a-z",
    "space": "\\t\\n\\v\\f\\r ",
    "word": "a-zA-Z0-9_",
    "punct": "!-/:-@\\[-`{-~",
}


class Unsupported(ValueError):
    """A Go construct with no Python re equivalent."""


def _class(src: str, i: int) -> tuple[str, int]:
    """Translate the character class starting at src[i] == '['; return it and the index after it."""
    out = ["["]
    i += 1
    if i < len(src) and src[i] == "^":
        out.append("^")
        i += 1
    first = True
    while i < len(src):
        c = src[i]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), i + 1
        first = False
        if c == "\\":
            esc = src[i : i + 2]
            if esc in ("\\p", "\\P"):
                raise Unsupported("Unicode class \\p{...}")
            out.append(esc)
            i += 2
            continue
        if src.startswith("[:", i):
            end = src.find(":]", i + 2)
            name = src[i + 2 : end]
            if end < 0 or name not in _POSIX:
                raise Unsupported(f"POSIX class {src[i : end + 2]!r}")
            out.append(_POSIX[name])
            i = end + 2
            continue
        # Python warns on '[', '&&', '~~', '||' inside a class (reserved for set operations): escape them.
        out.append("\\" + c if c in "[&~|" else c)
        i += 1
    raise Unsupported("unterminated character class")


def _tokens(src: str, i: int, depth: int) -> tuple[list[list[str]], int]:
    """Parse a group body into alternatives of tokens (each a translated piece); stop at its ')'."""
    alts: list[list[str]] = [[]]
    while i < len(src):
        c = src[i]
        if c == "\\":
            esc = src[i : i + 2]
            if esc in ("\\p", "\\P", "\\C"):
                raise Unsupported(f"escape {esc}")
            if esc == "\\Q":
                end = src.find("\\E", i)
                end = len(src) if end < 0 else end
                alts[-1].append(re.escape(src[i + 2 : end]))
                i = end + 2
                continue
            alts[-1].append({"\\z": "\\Z"}.get(esc, esc))
            i += 2
        elif c == "[":
            piece, i = _class(src, i)
            alts[-1].append(piece)
        elif c == "|":
            alts.append([])
            i += 1
        elif c == ")":
            if depth == 0:
                raise Unsupported("unbalanced ')'")
            return alts, i
        elif c == "(":
            flags = re.match(r"\(\?([imsU-]+)\)", src[i:])
            if flags:
                if "U" in flags.group(1):
                    raise Unsupported("flag U (ungreedy)")
                alts[-1].append("\x00" + flags.group(1))  # a flag marker, resolved by _emit
                i += flags.end()
                continue
            head = re.match(r"\((?:\?P?<(\w+)>|\?[imsx-]*:|\?<?[=!]|\?)?", src[i:])  # lookarounds: ours only
            assert head is not None
            opener = head.group(0)
            if head.group(1):
                opener = f"(?P<{head.group(1)}>"
            elif opener == "(?":
                raise Unsupported(f"group syntax at {src[i : i + 4]!r}")
            body, j = _tokens(src, i + head.end(), depth + 1)
            if j >= len(src):
                raise Unsupported("unbalanced '('")
            alts[-1].append(opener + _emit(body) + ")")
            i = j + 1
        else:
            alts[-1].append(c)
            i += 1
    if depth:
        raise Unsupported("unbalanced '('")
    return alts, i


def _emit(alts: list[list[str]]) -> str:
    """Join alternatives; a mid-pattern (?flags) applies to the rest of its group, as in RE2."""
    out: list[str] = []
    pending = ""  # flags still in force for the following alternatives
    for alt in alts:
        pieces: list[str] = []
        flags = pending
        for k, tok in enumerate(alt):
            if tok.startswith("\x00"):
                rest = "".join(t for t in alt[k + 1 :] if not t.startswith("\x00"))
                if any(t.startswith("\x00") for t in alt[k + 1 :]):
                    raise Unsupported("two inline flag groups in one alternative")
                pieces.append(f"(?{tok[1:]}:{rest})" if rest else "")
                pending = tok[1:]
                break
            pieces.append(tok)
        body = "".join(pieces)
        out.append(f"(?{flags}:{body})" if flags and body else body)
    return "|".join(out)


def translate(src: str) -> str:
    """A Python re pattern for a Go RE2 pattern (compiled with re.ASCII, as RE2's \\w, \\d, \\b are)."""
    lead = re.match(r"\(\?([ims]+)\)", src)
    prefix = ""
    if lead:  # flags at the very start apply to the whole pattern in both dialects
        prefix, src = f"(?{lead.group(1)})", src[lead.end() :]
    alts, _ = _tokens(src, 0, 0)
    return prefix + _emit(alts)


def _check(pattern: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        re.compile(pattern, re.ASCII)


def _secret_group(pattern: str, explicit: int) -> int:
    """The group reported as the secret: explicit, else the first non-empty group (0), or the whole match (-1)."""
    if explicit:
        return explicit
    unnamed = re.compile(pattern, re.ASCII).groups - len(re.compile(pattern, re.ASCII).groupindex)
    return 0 if unnamed else -1


def _starts_with_keyword(pattern: str, keywords: tuple[str, ...]) -> bool:
    """True when every match of pattern begins with one of keywords (any case).

    Such a rule is tried only where a keyword occurs (a match attempt there) instead of over windows around the
    occurrences; with a keyword as common as `s.` or `sk` the windows cover most of a text.  The pattern is read
    with re's own parser: every literal prefix a match can start with (zero-width assertions skipped, groups and
    alternatives followed, small character sets expanded) must start with a keyword.
    """
    import importlib

    try:  # re's own parser: re._parser from Python 3.11, sre_parse before
        parser, c = importlib.import_module("re._parser"), importlib.import_module("re._constants")
    except ImportError:
        parser, c = importlib.import_module("sre_parse"), importlib.import_module("sre_constants")

    longest = max(map(len, keywords), default=0)
    prefixes: set[str] = set()
    Frame = tuple[object, int]  # a parsed sequence and the index to go on from

    def walk(seq: object, index: int, rest: tuple[Frame, ...], acc: str) -> None:
        if len(prefixes) > 512:
            return
        if len(acc) >= longest:
            prefixes.add(acc)
            return
        items = list(seq)  # type: ignore[call-overload]
        if index == len(items):
            if rest:
                walk(rest[0][0], rest[0][1], rest[1:], acc)
            else:
                prefixes.add(acc)
            return
        op, av = items[index]
        if op is c.LITERAL:
            walk(seq, index + 1, rest, acc + chr(av).lower())
        elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):  # zero width: the match still starts here
            walk(seq, index + 1, rest, acc)
        elif op is c.SUBPATTERN:
            walk(av[-1], 0, ((seq, index + 1), *rest), acc)
        elif op is c.BRANCH:
            for alternative in av[1]:
                walk(alternative, 0, ((seq, index + 1), *rest), acc)
        elif op is c.IN and all(kind is c.LITERAL for kind, _ in av) and len(av) <= 8:
            for char in {chr(code).lower() for _, code in av}:
                walk(seq, index + 1, rest, acc + char)
        else:  # anything else ends the literal prefix
            prefixes.add(acc)

    walk(parser.parse(pattern, re.ASCII), 0, (), "")
    return len(prefixes) <= 512 and all(any(p.startswith(k) for k in keywords) for p in prefixes)


def _literal(text: str, width: int = 90) -> str:
    """A string literal, cut into adjacent pieces short enough for the project's line length."""
    if len(text) <= width:
        return repr(text)
    return "(" + " ".join(repr(text[i : i + width]) for i in range(0, len(text), width)) + ")"


def _formatted(text: str) -> str:
    """The module as `ruff format` lays it out, so that the generated file passes the project's format check."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(TARGET), "-"],
        input=text, capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    if done.returncode:
        raise SystemExit(f"ruff format failed (install the dev extras): {done.stderr.strip()}")
    return done.stdout


def build(config: dict[str, object]) -> str:
    rules_out: list[str] = []
    skipped: list[tuple[str, str]] = []
    rules = config["rules"]
    assert isinstance(rules, list)
    for rule in rules:
        rid = rule["id"]
        if rid in EXCLUDED:
            skipped.append((rid, EXCLUDED[rid]))
            continue
        src = rule["regex"]
        semi = _SEMI_GENERIC.match(src)
        if semi:
            src = _semi_generic_out(semi)
        src = src.replace(_TERMINATOR, _TERMINATOR_OUT)
        try:
            pattern = translate(src)
            _check(pattern)
        except (Unsupported, re.error) as exc:
            skipped.append((rid, f"pattern not translatable to Python re: {exc}"))
            continue
        allows: list[tuple[str, str]] = []
        stopwords: list[str] = []
        for allow in rule.get("allowlists", []):
            if allow.get("paths"):
                continue  # bound to file names (alone, or AND-ed with them): never applies to text
            target = allow.get("regexTarget", "secret")
            for regex in allow.get("regexes", []):
                try:
                    allow_pattern = translate(regex)
                    _check(allow_pattern)
                except (Unsupported, re.error) as exc:
                    skipped.append((f"{rid} (one allow-list regex)", f"not translatable: {exc}"))
                    continue
                allows.append((target, allow_pattern))
            stopwords.extend(allow.get("stopwords", []))
        keywords = tuple(k.lower() for k in rule.get("keywords", []))
        group = _secret_group(pattern, int(rule.get("secretGroup", 0)))
        entropy = float(rule.get("entropy", 0.0))
        anchored = _starts_with_keyword(pattern, keywords)
        rules_out.append(
            f"    ({rid!r}, {_literal(pattern)}, {group}, {entropy}, {keywords!r}, {tuple(allows)!r}, "
            f"{tuple(stopwords)!r}, {anchored}),"
        )
    allow_cfg = config["allowlist"]
    assert isinstance(allow_cfg, dict)
    global_allow = tuple(translate(r) for r in allow_cfg.get("regexes", []))
    for pattern in global_allow:
        _check(pattern)
    global_stop = tuple(allow_cfg.get("stopwords", []))
    lines = [
        '"""Credential rules generated from the gitleaks rule set: data only, read by credentials.py."""',
        "",
        "# generated by tools/gen_credential_rules.py from tools/credential-rules/gitleaks.toml; do not edit.",
        f"# Source: github.com/gitleaks/gitleaks config/gitleaks.toml at {GITLEAKS_COMMIT},",
        "# MIT licence (tools/credential-rules/LICENSE).  Generated data, so longer than the 500-line house limit.",
        "# Patterns are Python re syntax, compiled with re.ASCII.  See docs/credentials.md.",
        "",
        f'SOURCE = "gitleaks {GITLEAKS_COMMIT[:12]}"',
        "",
        "# (id, pattern, secret group: n, 0 = first non-empty group, -1 = whole match; entropy floor (0: none);",
        "#  keywords, lower case, one of which must occur; allow-list (target, pattern); stopwords;",
        "#  whether every match starts with a keyword, so that the rule is tried only where one occurs)",
        "RULES: tuple[",
        "    tuple[str, str, int, float, tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...], bool], ...",
        "] = (",
        *rules_out,
        ")",
        "",
        "# Values gitleaks never reports, whatever the rule: patterns on the secret, and stopwords it may not contain.",
        f"GLOBAL_ALLOW: tuple[str, ...] = {global_allow!r}",
        f"GLOBAL_STOPWORDS: tuple[str, ...] = {global_stop!r}",
        "",
        "# Rules of the source not used, with the reason.",
        "SKIPPED: tuple[tuple[str, str], ...] = (",
        *(f"    ({rid!r}, {_literal(why)})," for rid, why in skipped),
        ")",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="exit 1 when the generated module is out of date")
    args = ap.parse_args()
    if sys.version_info < (3, 11):
        print("needs Python 3.11+ (tomllib)", file=sys.stderr)
        return 2
    import importlib

    tomllib = importlib.import_module("tomllib")  # by name: mypy checks this file as Python 3.10, which lacks it
    text = _formatted(build(tomllib.loads(SOURCE.read_text(encoding="utf-8"))))
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is out of date: run python3 tools/gen_credential_rules.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
