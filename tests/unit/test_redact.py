"""Secret redaction: every kind is caught, ordinary lines pass unchanged, nothing is slow.

The fake secrets are assembled at run time from a seeded generator, so this file holds no
string a secret scanner would take for a real credential.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import time
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.infra import redact as redact_mod
from resume_kit.infra.redact import KINDS, redact, redact_all, redact_lines

_rng = random.Random(1234)
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"


def fake(chars: str, n: int) -> str:
    """Random text of ``n`` characters from ``chars``, always with a digit and a letter."""
    while True:
        value = "".join(_rng.choice(chars) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


JWT = (
    b64url({"alg": "HS256", "typ": "JWT"})
    + "."
    + b64url({"sub": "1234567890", "name": "Fake Person", "iat": 1516239022})
    + "."
    + fake(URLSAFE, 43)
)
PEM_BODY = "\n".join(fake(ALNUM + "+/", 64) for _ in range(5))

# (kind, the secret, the line it appears in) ; "{}" marks where the secret goes
SECRETS: list[tuple[str, str, str]] = [
    ("aws-access-key-id", "AKIA" + fake(UPPER_DIGITS, 16), "export AWS_ACCESS_KEY_ID={}"),
    ("aws-access-key-id", "ASIA" + fake(UPPER_DIGITS, 16), "key id {} in use"),
    ("aws-secret-access-key", fake(ALNUM + "/+", 40), "aws_secret_access_key = {}"),
    ("gcp-api-key", "AIza" + fake(URLSAFE, 35), "GOOGLE_API_KEY {}"),
    ("gcp-oauth-token", "ya29." + fake(URLSAFE, 60), "got access token {} for user"),
    (
        "azure-key",
        fake(ALNUM + "+/", 86) + "==",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core",
    ),
    ("azure-client-secret", fake(ALNUM, 3) + "8Q~" + fake(URLSAFE + ".~", 34), "secret is {}"),
    ("digitalocean-token", "dop_v1_" + fake(HEX, 64), "DO token {}"),
    ("github-token", "ghp_" + fake(ALNUM, 36), "remote: using {}"),
    ("github-token", "github_pat_" + fake(ALNUM + "_", 82), "GH {}"),
    ("github-token", "ghs_" + fake(ALNUM, 36), "installation {}"),
    ("gitlab-token", "glpat-" + fake(URLSAFE, 20), "CI_JOB {}"),
    ("bitbucket-token", "ATBB" + fake(ALNUM, 32), "app password {}"),
    ("atlassian-token", "ATATT3xFfGF0" + fake(URLSAFE, 180), "jira {}"),
    ("npm-token", "npm_" + fake(ALNUM, 36), "//registry.npmjs.org/:_authToken {}"),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 70), "twine upload -p {}"),
    ("docker-token", "dckr_pat_" + fake(URLSAFE, 27), "docker login -p {}"),
    ("vault-token", "hvs." + fake(URLSAFE, 90), "VAULT {}"),
    ("slack-token", "xoxb-" + "1234567890-1234567890123-" + fake(ALNUM, 24), "slack {}"),
    (
        "slack-webhook",
        "https://hooks.slack.com/services/T0"
        + fake(UPPER_DIGITS, 8)
        + "/B0"
        + fake(UPPER_DIGITS, 8)
        + "/"
        + fake(ALNUM, 24),
        "posting to {}",
    ),
    (
        "discord-bot-token",
        "MT" + fake(ALNUM, 24) + "." + fake(URLSAFE, 6) + "." + fake(URLSAFE, 38),
        "bot.run({})",
    ),
    (
        "discord-webhook",
        "https://discord.com/api/webhooks/123456789012345678/" + fake(URLSAFE, 68),
        "hook {}",
    ),
    ("telegram-bot-token", "123456789:AA" + fake(URLSAFE, 33), "bot {} started"),
    ("anthropic-api-key", "sk-ant-api03-" + fake(URLSAFE, 93) + "AA", "using {}"),
    ("openai-api-key", "sk-proj-" + fake(URLSAFE, 120), "OpenAI({})"),
    ("openai-api-key", "sk-" + fake(ALNUM, 48), "old style {}"),
    ("openrouter-api-key", "sk-or-v1-" + fake(HEX, 64), "router {}"),
    ("huggingface-token", "hf_" + fake(ALNUM, 34), "huggingface-cli login --token {}"),
    ("groq-api-key", "gsk_" + fake(ALNUM, 52), "groq {}"),
    ("xai-api-key", "xai-" + fake(ALNUM, 80), "grok {}"),
    ("replicate-token", "r8_" + fake(ALNUM, 37), "replicate {}"),
    ("perplexity-api-key", "pplx-" + fake(ALNUM, 48), "pplx {}"),
    ("stripe-key", "sk_live_" + fake(ALNUM, 99), "stripe.api_key {}"),
    ("stripe-key", "rk_test_" + fake(ALNUM, 24), "restricted {}"),
    ("stripe-key", "whsec_" + fake(ALNUM, 32), "webhook signing {}"),
    ("sendgrid-api-key", "SG." + fake(URLSAFE, 22) + "." + fake(URLSAFE, 43), "mail {}"),
    ("twilio-api-key", "SK" + fake(HEX, 32), "twilio {}"),
    ("mailgun-api-key", "key-" + fake(string.ascii_lowercase + string.digits, 32), "mg {}"),
    ("shopify-token", "shpat_" + fake(HEX, 32), "shop {}"),
    ("linear-api-key", "lin_api_" + fake(ALNUM, 40), "linear {}"),
    ("notion-token", "ntn_" + fake(ALNUM, 46), "notion {}"),
    ("jwt", JWT, "cookie session={}; Path=/"),
    ("jwt", JWT, "id_token {}"),
    (
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE KEY-----",
        "key:\n{}\ndone",
    ),
    (
        "private-key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\\n"
        + PEM_BODY.replace("\n", "\\n")
        + "\\n-----END OPENSSH PRIVATE KEY-----\\n",
        '{{"private_key": "{}"}}',
    ),
    (
        "private-key",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        + PEM_BODY
        + "\n-----END PGP PRIVATE KEY BLOCK-----",
        "{}",
    ),
    ("url-password", "s3cr3t-" + fake(ALNUM, 8), "cloning https://bob:{}@git.example.com/r.git"),
    ("url-password", fake(ALNUM, 12), "DATABASE_URL=postgres://app:{}@db:5432/app"),
    ("password", "hunter2-" + fake(ALNUM, 6), "login --password={}"),
    ("password", "correct horse battery", 'config = {{"password": "{}"}}'),
    ("password", fake(ALNUM, 10), "DB_PASSWORD={}"),
    ("password", fake(ALNUM, 10), "dbPassword: {}"),
    ("token", fake(ALNUM, 30), "curl https://api.example.com/x?access_token={}&page=2"),
    ("token", fake(ALNUM, 16), "GITHUB_TOKEN: {}"),
    ("secret", fake(ALNUM, 24), "client_secret='{}'"),
    ("api-key", fake(ALNUM, 32), "X-Api-Key: {}"),
    ("api-key", fake(ALNUM, 32), "api_key: '{}'"),
    ("authorization", fake(ALNUM, 40), "Authorization: Bearer {}"),
    ("authorization", base64.b64encode(b"user:pa55word").decode(), "Authorization: Basic {}"),
    ("bearer-token", fake(URLSAFE, 40), "sent header bearer {} to api".replace("bearer", "Bearer")),
]


def test_the_corpus_covers_at_least_25_kinds() -> None:
    kinds = {kind for kind, _, _ in SECRETS}
    assert len(kinds) >= 25
    assert kinds <= set(KINDS)


@pytest.mark.parametrize(("kind", "secret", "template"), SECRETS, ids=[s[0] for s in SECRETS])
def test_secret_is_redacted(kind: str, secret: str, template: str) -> None:
    line = template.format(secret)
    out = redact(line)
    assert f"[REDACTED:{kind}]" in out, out
    # no long piece of the secret survives
    for i in range(0, max(1, len(secret) - 8)):
        piece = secret[i : i + 8]
        if piece.strip() and not piece.isalpha():
            assert piece not in out, (piece, out)


def test_context_is_kept() -> None:
    pw = "p4ss-" + fake(ALNUM, 8)
    out = redact(f"git clone https://alice:{pw}@git.example.com:8443/team/repo.git")
    assert out == (
        "git clone https://alice:[REDACTED:url-password]@git.example.com:8443/team/repo.git"
    )
    assert redact(f"PASSWORD={pw} make deploy") == "PASSWORD=[REDACTED:password] make deploy"
    assert redact(f'{{"token": "{pw}"}}') == '{"token": "[REDACTED:token]"}'


ORDINARY = [
    "commit 3f2a9c1d8b7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a",
    "Merge: 3f2a9c1 8b7e6f5",
    f"request id {uuid.UUID(int=_rng.getrandbits(128))}",
    f'"integrity": "sha512-{base64.b64encode(hashlib.sha512(b"x").digest()).decode()}"',
    f"    {hashlib.sha256(b'pkg').hexdigest()}  pkg-1.0.tar.gz",
    f'hash = "sha256:{hashlib.sha256(b"lock").hexdigest()}"',
    f"data = {base64.b64encode(bytes(range(48))).decode()!r}",
    "def login(user: str, password: str, token: str | None = None) -> Session:",
    "    token = get_token(user)",
    "    password = os.environ['DB_PASSWORD']",
    "token=None",
    "secret = settings.SECRET_KEY",
    "E       KeyError: 'token'",
    "error: invalid token: unexpected end of input",
    "Please enter your password: ",
    "max_tokens=1500 temperature=0.2",
    "input_tokens: 1234, output_tokens: 56",
    "FAILED tests/test_auth.py::test_password_reset - AssertionError: assert 401 == 200",
    "pip install scikit-learn-intelex",
    "the sk-learn compatible estimator",
    "https://github.com/org/repo/pull/42",
    "ssh://git@github.com/org/repo.git",
    "https://user@example.com/path",
    "http://localhost:8080/api/v1/items?page=2&limit=50",
    "Authorization header missing",
    "Bearer token required",
    "passed=12 failed=1 skipped=3",
    "password reset email sent to user@example.com",
    "TOKEN_URL=https://oauth2.googleapis.com/token",
    "2026-11-29T08:00:00Z INFO worker-7 task=extract doc=001 status=done",
    "AKIAbc is not uppercase enough",
    "The quick brown fox jumps over the lazy dog.",
    "",
]


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_line_is_unchanged(line: str) -> None:
    assert redact(line) == line


def test_kinds_constant() -> None:
    assert len(KINDS) == len(set(KINDS))
    for kind in ("password", "token", "secret", "api-key", "private-key", "jwt", "url-password"):
        assert kind in KINDS


def test_redact_lines_keeps_one_line_per_input_line() -> None:
    key_lines = [
        "-----BEGIN EC PRIVATE KEY-----",
        *PEM_BODY.split("\n"),
        "-----END EC PRIVATE KEY----- trailing",
    ]
    lines = ["before", *key_lines, "token=" + fake(ALNUM, 20), "after"]
    out = redact_lines(lines)
    assert len(out) == len(lines)
    assert out[0] == "before" and out[-1] == "after"
    assert out[-2] == "token=[REDACTED:token]"
    assert all(line.startswith("[REDACTED:private-key]") for line in out[1 : 1 + len(key_lines)])
    assert out[len(key_lines)].endswith(" trailing")
    joined = "\n".join(out)
    for body_line in PEM_BODY.split("\n"):
        assert body_line not in joined


def test_truncated_key_block_is_still_redacted() -> None:
    text = "boom\n-----BEGIN PRIVATE KEY-----\n" + PEM_BODY + "\n"
    out = redact(text)
    assert out.startswith("boom\n[REDACTED:private-key]")
    assert PEM_BODY.split("\n")[2] not in out


def test_adversarial_inputs_are_fast() -> None:
    nasty = [
        "a" * 200_000,
        "password=" * 20_000,
        "https://" + "a:" * 50_000,
        "-----BEGIN PRIVATE KEY-----" * 10_000,
        ("-----BEGIN PRIVATE KEY-----" + "x" * 20_000) * 10 + "-----END PRIVATE KEY-----",
        "eyJ" + "a" * 100_000 + ".",
        "Authorization: " + "Bearer " * 20_000,
        ("x" * 30 + ".") * 10_000,
        "M" + "a" * 30 + "." * 50_000,
    ]
    for text in nasty:
        start = time.perf_counter()
        redact(text)
        assert time.perf_counter() - start < 1.0, text[:40]


def test_large_ordinary_log_is_quick() -> None:
    line = "2026-11-29 08:00:00 INFO processed doc-001 in 0.12s, 3 parties found\n"
    text = line * 4000  # ~280 KB, a log tail
    start = time.perf_counter()
    assert redact(text) == text
    assert time.perf_counter() - start < 0.25


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_safe_and_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(SECRETS),
    st.text(alphabet=" \t,;([", max_size=3),
    st.text(alphabet=" \t,;)]", max_size=3),
)
def test_secret_is_redacted_whatever_surrounds_it(
    case: tuple[str, str, str], before: str, after: str
) -> None:
    kind, secret, template = case
    out = redact(before + template.format(secret) + after)
    assert f"[REDACTED:{kind}]" in out


def _rule_by_rule(text: str) -> str:
    """The redaction loop as first written: every rule in order, skipped when none of its
    markers (or its hint) is in the text as it is at that rule."""
    if not text:
        return text
    lowered = text.lower()
    for rule in redact_mod._RULES:
        if rule.markers and not any(m in lowered for m in rule.markers):
            continue
        if rule.hint is not None and rule.hint.search(lowered) is None:
            continue
        if rule.substitute is not None:
            new = rule.substitute(text)
        else:
            assert rule.replace is not None
            new = rule.pattern.sub(rule.replace, text)
        if new != text:
            text, lowered = new, new.lower()
    return text


_SECRETISH = st.sampled_from(
    [
        "password=hunter2abc",
        "AKIAIOSFODNN7EXAMPLE",
        "Authorization: Bearer abcdefghijklmnopqrstu",
        "https://user:pa55word@example.com/x",
        "ghp_" + "a1" * 18,
        "--api-token s3cr3tvalue1",
        "machine example.com login me password pw123",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "src/pkg/module_12.py",
        " key: ",
        "token",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_SECRETISH, st.text(max_size=30)), max_size=6))
def test_marker_index_gives_what_the_rule_by_rule_loop_gives(parts: list[str]) -> None:
    text = " ".join(parts)
    assert redact(text) == _rule_by_rule(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.one_of(_SECRETISH, st.text(max_size=30)), max_size=4), max_size=8))
def test_redact_all_gives_what_redact_gives_each_text(texts_parts: list[list[str]]) -> None:
    # the markers are looked for in all the texts joined: one text's marker, or one that only
    # spans the join of two, must never change what the rules do to another text
    texts = ["".join(parts) for parts in texts_parts]
    assert redact_all(texts) == [redact(text) for text in texts]


def test_redact_all_is_right_when_the_memo_starts_over_midway(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the memo holds what this process redacted; a batch that overflows it must still return
    # each text redacted, the ones remembered before the batch included
    secret = "password=hunter2abc"
    monkeypatch.setattr(redact_mod, "_MEMO", {})
    monkeypatch.setattr(redact_mod, "_MEMO_MAX", 3)
    expected = redact(secret)
    assert "hunter2abc" not in expected
    texts = [secret, *(f"src/module_{n}.py" for n in range(10)), secret]
    assert redact_all(texts) == [expected, *texts[1:-1], expected]
    assert redact(expected) == expected  # what came out is its own result
