"""Every threshold of the credential scan pinned from both sides, so that moving one by a step fails a test."""

from __future__ import annotations

import base64
import json
import random
import re
from typing import Any

import pytest

from credential_formats import B64URL, FORMATS, HEX, _s
from wheypoint.model.credential_values import looks_like_password, looks_random, shannon
from wheypoint.model.credentials import redact, scan_text


def _rules(text: str) -> list[str]:
    return [h.rule for h in scan_text(text)]


# --- high-entropy-assignment ---------------------------------------------------------------------------


def test_assignment_needs_twelve_characters() -> None:
    assert _rules("api_key=qZ7xK2mP9vL4") == ["high-entropy-assignment"]  # 12
    assert _rules("api_key=qZ7xK2mP9vL") == []  # 11


def test_a_password_assignment_needs_eight_characters_of_three_classes() -> None:
    assert _rules("DB_PASSWORD=r0fI^oC2") == ["high-entropy-assignment"]  # 8, four classes
    assert _rules("DB_PASSWORD=r0fI^oC") == []  # 7
    assert _rules("DB_PASSWORD=summerhouse24") == []  # two classes, made of words
    assert looks_like_password("Tr0ub4dor&") and not looks_like_password("troubadour")


@pytest.mark.parametrize(
    ("value", "random_looking"),
    [
        ("qzxkmpvlwrt1", True),  # lower + digit: two classes
        ("qzxkmpvlwrtn", False),  # one class
        ("QZXKMPVLWRTN", False),
        ("123456789012", False),  # no letter at all
        ("1234-5678-90", False),
    ],
)
def test_two_character_classes_and_a_letter(value: str, random_looking: bool) -> None:
    assert looks_random(value, 12) is random_looking


def test_hex_entropy_threshold_is_62_percent() -> None:
    # 16 hex digits: the best is log2(16) = 4 bits, so the floor is 2.48.
    below, above = "002455456224024f", "000fded21e02112d"
    assert shannon(below) < 0.62 * 4 <= shannon(above)
    assert not looks_random(below, 12) and looks_random(above, 12)


def test_other_entropy_threshold_is_70_percent() -> None:
    # 12 characters: the best is log2(12), so the floor is 0.7 * 3.585 = 2.51.
    below, above = "3mt5w5m25w3w", "8w87js32838j"
    floor = 0.7 * 3.5849625007211565
    assert shannon(below) < floor <= shannon(above)
    assert not looks_random(below, 12) and looks_random(above, 12)


@pytest.mark.parametrize(
    ("value", "random_looking"),
    [
        ("/q8z3k9/x7w2m4", True),  # absolute, no words, no extension: could be a secret
        ("/q8z3k9/x7w2m4.q8z3", False),  # an extension of up to four characters makes it a file
        ("/q8z3k9/x7w2m4.q8z3k", True),  # five is not an extension
        ("./q8z3k9x7w2m4", False),  # relative paths never
        ("~/q8z3k9x7w2m4", False),
        ("C:\\q8z3k9x7w2m4", False),
    ],
)
def test_path_and_extension_exemption(value: str, random_looking: bool) -> None:
    assert looks_random(value, 12) is random_looking


# --- jwt ---------------------------------------------------------------------------------------------


def _b64(obj: object, pad: bool = False) -> str:
    raw = base64.urlsafe_b64encode(json.dumps(obj).encode()).decode()
    return raw if pad else raw.rstrip("=")


def test_jwt_header_must_name_alg_typ_kid_or_enc() -> None:
    rng = random.Random(4)
    payload, signature = _b64({"sub": "42", "iat": 1700000000}), _s(rng, B64URL, 43)
    for key in ("alg", "typ", "kid", "enc"):
        assert _rules(f"{_b64({key: 'x'})}.{payload}.{signature}") == ["jwt"], key
    assert _rules(f"{_b64({'foo': 'HS256'})}.{payload}.{signature}") == []


def test_jwt_payload_must_decode_to_an_object() -> None:
    header, signature = _b64({"alg": "HS256"}), _s(random.Random(5), B64URL, 43)
    assert _rules(f"{header}.{_b64({'sub': '42'})}.{signature}") == ["jwt"]
    assert _rules(f"{header}.{_b64(['sub', '42'])}.{signature}") == []  # a list, not an object


def test_jwt_parts_that_need_padding_still_decode() -> None:
    # a header whose base64 length is not a multiple of 4: it decodes only once padding is restored
    header = _b64({"alg": "HS256", "typ": "JWT", "x": "y"})
    assert len(header) % 4
    assert _rules(f"{header}.{_b64({'sub': '42'})}.{_s(random.Random(6), B64URL, 43)}") == ["jwt"]


# --- openai, authorization header ------------------------------------------------------------------------


def test_letters_only_sk_string_is_not_an_openai_key() -> None:
    assert _rules("sk-" + "abcdefghijklmnopqrstuvwx") == []
    assert _rules("sk-" + "abcdefghijklmnopqrstuvw1") == ["openai-api-key"]


_BASIC = base64.b64encode(b"deploy:s3cr3tPa55w0rd").decode()


@pytest.mark.parametrize(
    ("header", "fires"),
    [
        ("Basic " + _BASIC, True),
        ("Basic " + base64.b64encode(b"deploy:password").decode(), False),  # placeholder password
        ("Basic " + base64.b64encode(b"guest:guest").decode(), False),  # password equal to the user
        ("Basic " + base64.b64encode(b"no-colon-here").decode(), False),  # not user:password
        ("Basic not*base64!", False),
        ("Basic " + _BASIC[:8] + "-" + _BASIC[8:], False),  # a stray `-`: not base64 at all
        ("Bearer eyJq8Z3k9X7w2M4.Zr7tQ2wVx9LmK4pN.Kp3mX8vQ2zR7tL", False),  # three parts: the JWT rule's to judge
        ("Bearer eyJq8Z3k9X7w2M4Zr7tQ2wVx9LmK4pN", True),  # no dot: a bearer token like any other
        ("Bearer eyJq8Z3k9X7w2M4.Zr7tQ2wVx9LmK4pN.Kp3mX8vQ2zR7tL.x9", True),  # four parts: not a JWT
        ("Bearer q8Z3k9X7w2M4", True),  # 12 random characters
        ("Bearer q8Z3k9X7w2M", False),  # 11
    ],
)
def test_authorization_header(header: str, fires: bool) -> None:
    assert bool(scan_text(f"Authorization: {header}")) is fires


# --- hand-written formats and the generated rules' own floors --------------------------------------------


def test_discord_token_starts_with_a_numeric_id() -> None:
    rng = random.Random(7)
    tail = f".{_s(rng, B64URL, 6)}.{_s(rng, B64URL, 38)}"
    numeric = base64.b64encode(b"123456789012345678").decode().rstrip("=")
    wordy = base64.b64encode(b"abcdefghijklmnopqr").decode().rstrip("=")
    assert _rules("bot " + numeric + tail) == ["discord-bot-token"]
    assert _rules("bot " + wordy + tail) == []
    # The id must start a word: glued to a letter or a dash it is part of something else.
    assert _rules("botx" + numeric + tail) == [] and _rules("bot-" + numeric + tail) == []
    # An id part that is not base64 at all (25 characters: one past a multiple of four) is no bot id.
    assert _rules("bot " + numeric + "A" + tail) == []


def test_telegram_token_needs_eight_to_ten_digits_and_mixed_classes() -> None:
    body = "AA" + _s(random.Random(8), B64URL, 33)
    assert _rules("12345678:" + body) == ["telegram-bot-token"]
    assert _rules("1234567:" + body) == []
    assert _rules("12345678:" + "a" * 35) == []


def test_gitleaks_entropy_floor() -> None:
    # shopify-access-token drops values of entropy <= 2 bits
    assert _rules("sh" + "pat_" + "ab" * 16) == []
    assert _rules("sh" + "pat_" + _s(random.Random(9), HEX, 32)) == ["shopify-access-token"]


def test_gitleaks_entropy_floor_on_both_sides_of_three_bits() -> None:
    # github-pat's floor is 3 bits over the whole token, prefix included: six symbols repeated sit just under it
    # (2.995), seven just over (3.095). A miscounted entropy moves one across.
    assert _rules("key ghp_" + "abcdef" * 6) == []
    assert _rules("key ghp_" + ("abcdefg" * 6)[:36]) == ["github-pat"]


def _generated_rule(entropy: float = 0.0, allow: tuple[tuple[str, str], ...] = ()) -> Any:
    """A generated rule as the scan holds it, with its entropy floor and allow-list set for the test."""
    from wheypoint.model import credentials

    rule = credentials.Rule("test-rule", 0, ("tok",), r"tok_(\w+)", re.ASCII)
    rule.kind, rule.group, rule.entropy, rule.allow = "gitleaks", 1, entropy, allow
    return rule


def _dropped(rule: Any, text: str) -> bool:
    from wheypoint.model import credentials

    m = re.search(rule.src, text, rule.flags)
    assert m is not None
    return credentials._gitleaks_allowed(credentials._compiled(), rule, m, m.group(1))


def test_the_gitleaks_entropy_floor_is_exclusive() -> None:
    """gitleaks keeps a finding only above the floor: eight symbols once each are exactly 3 bits, and dropped."""
    assert shannon("q7Zk2mXv") == 3.0
    assert _dropped(_generated_rule(entropy=3.0), "tok_q7Zk2mXv")
    assert not _dropped(_generated_rule(entropy=3.0), "tok_q7Zk2mXvR")  # nine symbols: log2(9) bits
    assert not _dropped(_generated_rule(), "tok_q7q7")  # one bit, and no floor to fall under


@pytest.mark.parametrize(
    ("target", "pattern", "text", "dropped"),
    [
        ("secret", r"^EXAMPLE", "x tok_EXAMPLE1 y", True),
        ("secret", r"^EXAMPLE", "x tok_REAL1 EXAMPLE", False),  # the secret alone is looked at
        ("match", r"^tok_EX", "x tok_EXAMPLE1", True),  # the whole match
        ("match", r"^EX", "x tok_EXAMPLE1", False),
        ("line", r"^x tok", "a\nx tok_REAL1 y\nb", True),  # the line, from its first character
        ("line", r"y$", "a\nx tok_REAL1 y\nb", True),  # ... to its last
        ("line", r"^x tok", "x tok_REAL1 y", True),  # a line at the start of the text
        ("line", r"b", "a\nx tok_REAL1 y\nb", False),  # not the next line
        ("line", r"a", "a\nx tok_REAL1 y\nb", False),  # nor the one before
        ("line", r"^x tok_REAL1 y$", "a\nx tok_REAL1 y\nb", True),  # exactly the line, no more, no less
        ("line", r"^x tok_REAL1 y$", "x tok_REAL1 y", True),  # the text's only line
        ("line", r"^x tok_REAL1 y$", "\nx tok_REAL1 y", True),  # after a newline that opens the text
        ("line", r"^x tok_REAL1 y$", "a\nx tok_REAL1 y", True),  # the last line, with no newline after it
    ],
)
def test_gitleaks_allow_targets(target: str, pattern: str, text: str, dropped: bool) -> None:
    """Each allow-list target looks at its own text (none of today's rules uses `match` or `line`; a refresh may)."""
    assert _dropped(_generated_rule(allow=((target, pattern),)), text) is dropped


def test_gitleaks_stopwords_and_global_allow_list() -> None:
    """A secret holding a stopword (the rule's, or one of gitleaks' global ones, in any case), or matching a global
    allow pattern (a shell variable, a path), is dropped; the same rule keeps a secret that holds none."""
    rule = _generated_rule()
    rule.stopwords = ("zebra",)
    assert _dropped(rule, "tok_q7ZEBRAk2")  # the rule's stopword, any case
    assert _dropped(rule, "tok_q7ABCDEFGHIJKLMNOPQRSTUVWXYZk2")  # a global stopword
    assert not _dropped(rule, "tok_q7Zk2mXvR")
    plain = _generated_rule()
    assert not _dropped(plain, "tok_q7ZEBRAk2")  # another rule's stopword is not this one's


@pytest.mark.parametrize("secret", ["$HOME_DIR", "/usr/local/bin", "true", "%PATH%"])
def test_gitleaks_global_allow_patterns(secret: str) -> None:
    rule = _generated_rule()
    rule.src = r"tok_(\S+)"
    assert _dropped(rule, f"tok_{secret} rest")


def test_prose_secret_allows_ten_words_between_name_and_link() -> None:
    value = "qZ7xK2mP9vL4wR8t"
    assert _rules(f"the token for the prod is {value}") == ["prose-secret"]
    ten = "for the old prod db that Dana rotated last week"
    assert _rules(f"the token {ten} is {value}") == ["prose-secret"]
    assert _rules(f"the token {ten} ago is {value}") == []  # eleven
    assert _rules(f"the token {ten} {value}") == []  # no link: the value must follow the name at once


def test_mysql_password_flag() -> None:
    assert _rules("mysql -u root -p'Zq8!rT5wNm' shop") == ["password-flag"]
    assert _rules("mysql -u root -pZq8rT5 shop") == ["password-flag"]  # six characters
    assert _rules("mysql -u root -pZq8rT shop") == []  # five
    assert _rules("mysql -u root -p shop") == []  # -p alone asks for the password


def test_a_bearer_value_is_left_to_the_jwt_rule_only_when_it_has_a_jwt_s_three_parts() -> None:
    body = "eyJ" + _s(random.Random(11), "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", 30)
    # Starts like a JWT but is one part: an opaque bearer token, judged by the header rule.
    assert _rules("Authorization: Bearer " + body) == ["authorization-header"]
    # The jwt.io sample in a header: the jwt rule claims it and its allow-list keeps it quiet.
    sample = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2"
              "MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")  # fmt: skip
    assert _rules("Authorization: Bearer " + sample) == []


def test_a_chosen_password_may_hold_words_up_to_sixty_percent() -> None:
    # Three classes make a password unless words cover 60% of it (identifiers such as deploy-cache-main_42).
    assert looks_like_password("Hello-12X!")  # one word, 5 of 10 characters: a password
    assert not looks_like_password("Hello-World1")  # two words, 10 of 12: an identifier


def test_two_credentials_that_touch_are_both_reported() -> None:
    # Overlapping hits keep the earlier rule; hits that only meet at one offset do not overlap.
    rng = random.Random(3)
    key_id, pem = FORMATS["aws-access-key-id"][0](rng), FORMATS["private-key"][0](rng)
    hits = scan_text("x " + key_id + pem + " y")
    assert [h.rule for h in hits] == ["aws-access-token", "private-key"]
    assert hits[0].end == hits[1].start
    # ... and the other way round: the earlier rule's hit first in the text, the later one starting at its end
    hits = scan_text("x " + pem + key_id + " y")
    assert [h.rule for h in hits] == ["private-key", "aws-access-token"]
    assert hits[0].end == hits[1].start


def test_a_value_already_masked_with_asterisks_is_left_as_it_is() -> None:
    text = "postgresql://app:***@db.internal:5432/shop and postgresql://app:Zq8rT5wNm2@db.internal/shop"
    assert [h.rule for h in scan_text(text)] == ["url-password"]  # *** is a mask (allow-list), not a password
    assert redact(text) == text.replace("Zq8rT5wNm2", "[redacted url-password]")


def test_an_openai_key_body_needs_a_digit_and_a_letter_anywhere() -> None:
    assert _rules("use sk-" + "1" + "abcdefghijklmnopqrstuvw") == ["openai-api-key"]  # the digit first
    assert _rules("use sk-" + "a" + "1234567890123456789012") == ["openai-api-key"]  # the letter first
    assert _rules("use sk-" + "abcdefghijklmnopqrstuvwx") == []  # letters only: a slug, not a key


def test_a_gitlab_token_body_mixes_two_classes() -> None:
    # gloas- has no generated rule of its own: only the hand-written gitlab-token judges it
    assert _rules("x gloas-abcdefghij1234567890 y") == ["gitlab-token"]  # lower case and digits
    assert _rules("x gloas-ABCDEFGHIJklmnopqrst y") == ["gitlab-token"]  # upper and lower case
    assert _rules("x gloas-abcdefghijklmnopqrstuv y") == []  # one class: a slug


def test_discord_id_part_boundaries() -> None:
    rng = random.Random(11)
    tail = f".{_s(rng, B64URL, 6)}.{_s(rng, B64URL, 38)}"
    nineteen = base64.b64encode(b"1234567890123456789").decode().rstrip("=")  # 26 characters: two padding to add
    assert _rules("bot " + nineteen + tail) == ["discord-bot-token"]
    numeric = base64.b64encode(b"123456789012345678").decode().rstrip("=")
    # only the character right before the id counts: a letter there glues it to a word, whatever precedes that
    assert _rules("id: a" + numeric + tail) == []
    assert _rules("ab: " + numeric + tail) == ["discord-bot-token"]


def test_telegram_body_of_exactly_two_classes() -> None:
    body = _s(random.Random(12), "abcdefghijklmnopqrstuvwxyz0123456789", 35)
    assert any(c.isdigit() for c in body) and any(c.isalpha() for c in body)
    assert _rules("bot 123456789:" + body) == ["telegram-bot-token"]


@pytest.mark.parametrize(("before", "found"), [(" ", True), ("_", False), (".", False), ("-", False), (" a", False)])
def test_a_mailgun_key_starts_a_word(before: str, found: bool) -> None:
    value = "ke" + "y-" + _s(random.Random(13), HEX, 32)
    assert (_rules("mg" + before + value) == ["mailgun-api-key"]) is found


def test_basic_credentials_need_a_password() -> None:
    assert _rules("Authorization: Basic " + base64.b64encode(b"deploy:Z").decode()) == ["authorization-header"]
    assert _rules("Authorization: Basic " + base64.b64encode(b"deploy:").decode()) == []


def test_a_password_named_value_is_judged_as_a_chosen_password() -> None:
    # two classes only, yet random from 8 characters on; a token-named value needs 12
    assert _rules("db_password=k8jq2mxv") == ["high-entropy-assignment"]
    assert _rules("db_password=k8jq2mx") == []
    assert _rules("api_token=k8jq2mxv9lr") == []
    assert _rules("db_password=passw0rd") == []  # a placeholder


def test_a_chosen_password_has_eight_characters_at_least() -> None:
    assert _rules("the password is Ab1!xY2?") == ["prose-secret"]  # 8, four classes
    assert _rules("the password is Ab1!xY2") == []  # 7


def test_a_chosen_password_mixes_three_classes() -> None:
    # repeated, so never random: only the class count decides
    assert looks_like_password("Xq7mXq7m")  # upper, lower, digit
    assert not looks_like_password("xq7mxq7m")  # two classes
    assert not looks_like_password("Xq7mXq7")  # seven characters
    assert looks_like_password("k8jq2mxv") and not looks_random("k8jq2mxv", min_len=9)  # random from 8 on


def test_what_reads_as_words() -> None:
    """A run of three or more letters counts as a word when 65% of its letter pairs are common English ones."""
    import re as regex

    from wheypoint.model.credential_values import _WORD_SRC, _wordy

    words = regex.compile(_WORD_SRC)
    assert _wordy("theXq7", words, 0.5)  # `the`: both pairs common, exactly half the value
    assert not _wordy("thXq7z", words, 0.5)  # `th` is too short to count
    assert _wordy("roamkfipazunsabwlsese", words, 1.0)  # 13 of 20 pairs common: exactly 65%
    assert not _wordy("qlroqibalok", words, 0.5)  # 6 of 10: under 65%


def test_a_token_named_in_prose_needs_twelve_random_characters() -> None:
    assert _rules("the token is k8Jq2mXv9Lr4") == ["prose-secret"]
    assert _rules("the token is k8Jq2mXv9Lr") == []


@pytest.mark.parametrize(
    ("value", "random_looking"),
    [
        ("yDurcachelLjyWTEj2B8userco", False),  # under 32 characters: half in words is enough to be words
        ("cachetokenvthevovxviDxotheoJixbu", True),  # 32: words must cover 65%
        ("774w577ss412s145shdukudtuw1t5i7hkwi2uk5kdk1hu51d", True),  # lower case and digits: 36 symbols
        ("-vbvhwbvwlwykkdbcpvxx-ywbxywdibk_cbilxlkywdwvx-c_v_vswl-bhllapky", True),  # lower case and others: 42
        ("CPESSJJ631WSYTSYTS3E6HCTEHHDPS33S8HEYWTEDY3HHETW1WH31TJWHJE8SDSD", True),  # upper case and digits: 36
    ],
)
def test_looks_random_at_its_edges(value: str, random_looking: bool) -> None:
    """Values found by search right at an edge: the length where the word share changes, and the alphabet sizes
    (26 per case, 10 digits, 16 others) that set the best entropy a value could reach."""
    assert looks_random(value, min_len=12) is random_looking


@pytest.mark.parametrize(
    ("group", "pattern", "text", "secret"),
    [
        (1, r"key=(\w+)", "a key=Zr7tQ2 b", "Zr7tQ2"),  # the rule's group
        (2, r"(key)=(\w+)", "a key=Zr7tQ2 b", "Zr7tQ2"),
        (0, r"key=(x)?(\w+)", "a key=Zr7tQ2 b", "Zr7tQ2"),  # the first group that matched something
        (0, r"(key)=(\w+)", "a key=Zr7tQ2 b", "key"),
        (0, r"key=\w+", "a key=Zr7tQ2 b", "key=Zr7tQ2"),  # no group: the whole match
        (-1, r"(key)=(\w+)", "a key=Zr7tQ2 b", "key=Zr7tQ2"),  # the whole match, as told
    ],
)
def test_the_secret_of_a_generated_rule_is_the_group_gitleaks_picks(group: int, pattern: str, text: str,
                                                                     secret: str) -> None:  # fmt: skip
    from wheypoint.model import credentials

    rule = _generated_rule()
    rule.group = group
    m = re.search(pattern, text)
    assert m is not None
    start, end = credentials._gitleaks_span(rule, m)
    assert text[start:end] == secret


def test_a_telegram_token_right_after_another_number_and_colon() -> None:
    # the first run (12345678:) is followed by a colon, not a token: the second, nine characters on, is one
    body = "AAH" + "x7Kq2" * 6 + "Zp"
    text = "ids 12345678:87654321:" + body + " ok"
    assert [text[h.start : h.end] for h in scan_text(text)] == ["87654321:" + body]
