"""Secret redaction: every string taken from logs, command output or transcripts passes here.

``redact(text)`` replaces what looks like a credential by ``[REDACTED:<kind>]``. Two kinds of
rules: *shaped* secrets that carry a recognisable prefix or structure (``AKIA…``, ``ghp_…``,
``sk-ant-…``, JWTs, PEM private-key blocks), and *context* secrets recognised by what stands
next to them (``password=…``, ``Authorization: Bearer …``, a URL's ``user:password@``). Bare
high-entropy strings with no context are left alone on purpose: git shas, UUIDs, lock-file
hashes and base64 test data look exactly like that and must stay readable.

Speed and safety: each pattern is compiled once, on first use; a pattern only runs when one of its cheap
lower-case markers occurs in the text; every quantifier is bounded, so no input can make a
pattern backtrack for long.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from resume_kit.core.lazy_regex import lazy
from resume_kit.core.light_dataclass import dataclass

REDACTED = "[REDACTED:{}]"


def marker(kind: str) -> str:
    return REDACTED.format(kind)


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    markers: tuple[
        str, ...
    ]  # lower-case substrings; the rule runs only if one occurs (empty: always)
    # builds the replacement from the match; default: the whole match becomes the marker
    replace: Callable[[re.Match[str]], str] | None = None
    # or rewrites the whole text itself (for what one regex cannot do in linear time)
    substitute: Callable[[str], str] | None = None
    # a cheap pattern searched in the lower-cased text first: no match, the rule is skipped
    hint: re.Pattern[str] | None = None


def _whole(kind: str) -> Callable[[re.Match[str]], str]:
    return lambda _m: marker(kind)


def _has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _shaped(
    kind: str,
    regex: str,
    markers: Sequence[str],
    *,
    flags: int = 0,
    mixed: bool = False,
) -> _Rule:
    """A secret recognisable by itself; ``mixed`` demands both digits and letters in the match."""
    pattern = lazy(regex, flags)
    if mixed:

        def replace(m: re.Match[str]) -> str:
            return marker(kind) if _has_digit_and_letter(m.group(0)) else m.group(0)

        return _Rule(kind, pattern, tuple(markers), replace)
    return _Rule(kind, pattern, tuple(markers), _whole(kind))


# ---- context rules -----------------------------------------------------------------------------

_PEM_BEGIN = lazy(r"-----BEGIN [A-Z0-9 ]{0,80}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = lazy(r"-----END [A-Z0-9 ]{0,80}PRIVATE KEY(?: BLOCK)?-----")
# the body lines just before an END whose BEGIN was cut off (the tail of a log or an output)
_PEM_BODY_LINE = lazy(r"[ \t]{0,8}[A-Za-z0-9+/=]{16,128}[ \t]{0,8}")
_PEM_HEADER_FIELD = lazy(r"[ \t]{0,8}(?:Proc-Type|DEK-Info|Comment):[^\r\n]{0,200}")
PEM_MAX_CHARS = 16384
_BLOCK_MARKERS = ("PRIVATE KEY", "PuTTY-User-Key-File")
_PUTTY = lazy(
    r"PuTTY-User-Key-File-\d: [^\r\n]{0,100}\r?\n(?:[^\r\n]{0,200}\r?\n){0,80}?"
    r"Private-Lines: (?P<n>\d{1,3})"
)


def _orphan_end_start(text: str, end_start: int, floor: int) -> int:
    """Where the body that ends at ``end_start`` begins: the base64 (and header field) lines
    just before it, not before ``floor``."""
    start = end_start
    while start > floor:
        line_start = text.rfind("\n", floor, start - 1) + 1
        line = text[line_start:start].rstrip("\r\n")
        if not (_PEM_BODY_LINE.fullmatch(line) or _PEM_HEADER_FIELD.fullmatch(line)):
            break
        start = line_start
    return start


def _redact_private_keys(text: str) -> str:
    """Each BEGIN…END private-key block (at most 16 KiB, real or ``\\n``-escaped newlines)
    becomes one marker; a BEGIN with no END in reach takes the rest of the text; an END whose
    BEGIN was cut off takes the base64 lines before it. The END lines are found once and
    bisected, so many headers without an END cost linear time, not a 16 KiB scan each."""
    from bisect import bisect_left

    ends = list(_PEM_END.finditer(text))
    end_starts = [end.start() for end in ends]
    pieces: list[str] = []
    pos = 0
    for begin in _PEM_BEGIN.finditer(text):
        if begin.start() < pos:
            continue
        # ENDs between the previous stop and this BEGIN belong to a block whose BEGIN was cut
        k_prev = bisect_left(end_starts, pos)
        k = bisect_left(end_starts, begin.end())
        for end in ends[k_prev:k]:
            if end.start() >= pos:
                start = _orphan_end_start(text, end.start(), pos)
                pieces += [text[pos:start], marker("private-key")]
                pos = end.end()
        if k < len(end_starts) and end_starts[k] - begin.end() <= PEM_MAX_CHARS:
            stop = ends[k].end()
        else:
            stop = len(text)
        pieces += [text[pos : begin.start()], marker("private-key")]
        pos = stop
    for end in ends[bisect_left(end_starts, pos) :]:
        if end.start() >= pos:
            start = _orphan_end_start(text, end.start(), pos)
            pieces += [text[pos:start], marker("private-key")]
            pos = end.end()
    for putty in _PUTTY.finditer(text, pos):
        if putty.start() < pos:
            continue
        # a PuTTY key: everything from its header to the end of its private lines
        stop = putty.end()
        for _ in range(int(putty.group("n")) + 1):  # the private lines, then the MAC line
            nl = text.find("\n", stop + 1)
            stop = len(text) if nl < 0 else nl
        pieces += [text[pos : putty.start()], marker("private-key")]
        pos = stop
    if not pieces:
        return text
    pieces.append(text[pos:])
    return "".join(pieces)


def redact_blocks(text: str) -> str:
    """``text`` with every multi-line secret (a private-key block) replaced by one marker.

    Run on the whole text before it is split into lines or excerpted, so no line of a block
    survives on its own; :func:`redact` does this first itself."""
    if not any(m in text for m in _BLOCK_MARKERS):
        return text
    return _redact_private_keys(text)


def split_lines(text: str) -> list[str]:
    """``text.splitlines()`` after :func:`redact_blocks`: the one way untrusted output is split
    into lines (each line still needs :func:`redact` before it is shown)."""
    return redact_blocks(text).splitlines()


_URL_PASSWORD = lazy(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/@?#\"'<>]{0,256}:)"
    r"(?P<password>[^\s/?#\"'<>]{1,256})(?P<at>@)(?=[A-Za-z0-9\[])"
)

_ASSIGN_KEYWORDS = (
    r"pass(?:word|wd|phrase)?|pwd|secret(?:[_\-]?key)?|token|api[_\-]?key|apikey"
    r"|access[_\-]?key(?:[_\-]?id)?|auth[_\-]?key|private[_\-]?key|client[_\-]?secret"
    r"|credentials?|session[_\-]?key"
)
_ASSIGNMENT = lazy(
    r"(?P<key>(?<![A-Za-z0-9])(?P<quote>[\"']?)"
    # a prefix ends in a separator (db_password) or a lower-case letter before camelCase (apiToken)
    r"(?:[A-Za-z0-9_.\-]{0,40}[_.\-]|(?-i:[A-Za-z0-9_.\-]{0,40}[a-z0-9](?=[A-Z])))?"
    r"(?P<word>" + _ASSIGN_KEYWORDS + r")(?P=quote))"
    r"(?P<op>[ \t]{0,3}(?::=|=|:)[ \t]{0,3})"
    r"(?P<value>\"[^\"\r\n]{1,512}\"|'[^'\r\n]{1,512}'|[^\s\"',;&<>()\[\]{}]{1,512})",
    re.IGNORECASE,
)
_PLACEHOLDERS = frozenset(
    {
        "none", "null", "nil", "true", "false", "str", "string", "int", "bytes", "bool",
        "optional", "undefined", "empty", "required", "redacted", "hidden", "secret",
        "password", "token", "changeme", "xxx", "...", "***", "<redacted>", "sensitive",
    }
)  # fmt: skip


_DOTTED_NAME = lazy(r"[A-Za-z_]\w{0,64}(?:\.[A-Za-z_]\w{0,64}){1,8}")


def _assignment_kind(word: str) -> str:
    word = word.lower()
    if word.startswith("pass") or word == "pwd":
        return "password"
    if word.startswith("token"):
        return "token"
    if "key" in word:
        return "api-key"
    return "secret"


_PROSE_AFTER_PASSWORD = frozenset(
    {
        "incorrect", "invalid", "expired", "missing", "required", "changed", "updated", "wrong",
        "mismatch", "rejected", "disabled", "enabled", "protected", "accepted", "unchanged",
        "prompt", "optional", "omitted", "provided", "supplied", "ignored", "default",
        "authentication", "reset", "expires", "policy", "strength", "length",
    }
)  # fmt: skip


def _looks_like_a_value(value: str, op: str, word: str | None = None) -> bool:
    """False for code and placeholders (``password: str``, ``token = None``, ``key=$KEY``)."""
    bare = value[1:-1] if value[:1] in "\"'" and value[-1:] == value[:1] else value
    if len(bare) < 3 or bare.lower() in _PLACEHOLDERS or bare.startswith("[REDACTED:"):
        return False
    if bare[0] in "$%{<[(*`":
        return False
    if set(bare) <= {"*", "x", "X", "."} or (bare.isdigit() and len(bare) < 8):
        return False
    quoted = bare is not value
    if not quoted and _DOTTED_NAME.fullmatch(bare):  # settings.SECRET_KEY, self.token
        return False
    # "key: value" in prose ("invalid token: unexpected") is too common to take an unquoted
    # word after a colon on faith: demand something secret-like in it.
    if ":" in op and not quoted:
        if word is not None and _assignment_kind(word) == "password":
            # "password: correcthorse" is a password; "password: incorrect" is prose
            return len(bare) >= 6 and bare.lower() not in _PROSE_AFTER_PASSWORD
        return len(bare) >= 6 and (any(c.isdigit() for c in bare) or not bare.isalpha())
    return True


def _replace_assignment(m: re.Match[str]) -> str:
    value, op = m.group("value"), m.group("op")
    if not _looks_like_a_value(value, op, m.group("word")):
        return m.group(0)
    if m.string[m.end() : m.end() + 1] in ("(", "[") and _DOTTED_NAME.fullmatch("_." + value):
        return m.group(0)  # code: token = get_token(user), key = os.environ["KEY"]
    kind = _assignment_kind(m.group("word"))
    quote = value[0] if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1 else ""
    return f"{m.group('key')}{op}{quote}{marker(kind)}{quote}"


_AUTH_HEADER = lazy(
    r"(?P<head>\b(?:proxy-)?authorization[\"']?[ \t]{0,3}[:=][ \t]{0,3}[\"']?"
    r"(?:(?:bearer|basic|token|digest|bot|apikey)[ \t]{1,3})?)"
    r"(?!(?:bearer|basic|token|digest|bot|apikey)\b)(?P<value>[A-Za-z0-9._~+/=\-]{6,4096})",
    re.IGNORECASE,
)
_BEARER = lazy(r"(?P<head>\bBearer[ \t]{1,3})(?P<value>[A-Za-z0-9._~+/\-]{16,4096}=*)")


def _keep_head(kind: str) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        if m.group("value").startswith("[REDACTED"):
            return m.group(0)
        return m.group("head") + marker(kind)

    return replace


def _replace_url(m: re.Match[str]) -> str:
    if m.group("password").startswith("[REDACTED:"):
        return m.group(0)
    return m.group("head") + marker("url-password") + m.group("at")


# An environment-style name with a secret word anywhere in it (APITOKEN, dbpassword, SMTPPASS,
# ENCRYPTION_KEY): the camelCase/separator forms above miss these.
_ENV_NAME = lazy(
    r"(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z_][A-Za-z0-9_]{1,63})"
    r"(?P<op>[ \t]{0,3}:?=[ \t]{0,3})"
    r"(?P<value>\"[^\"\r\n]{1,512}\"|'[^'\r\n]{1,512}'|[^\s\"',;&<>()\[\]{}]{1,512})"
)
# the word ends the name or one of its parts: SMTPPASS, DB_PASSWORD_FILE, not PASSTHROUGH
_ENV_WORDS = lazy(
    r"(pass(?:word|wd|phrase)?|pwd|secret|token|key|credentials?)(?=[_.\-]|\Z)", re.IGNORECASE
)
_NOT_SECRET_SUFFIX = lazy(
    r"[_.\-]?(?:url|uri|path|file|dir|name|endpoint|host|port|ttl|timeout|length|size|type"
    r"|format|algorithm|header|prefix|count|env|var|field|id)\Z",
    re.IGNORECASE,
)
_NOT_SECRET_NAMES = frozenset({"pwd", "oldpwd", "keymap", "keyboard", "keys", "passes"})


def _replace_env_name(m: re.Match[str]) -> str:
    name, value, op = m.group("name"), m.group("value"), m.group("op")
    found = _ENV_WORDS.search(name)
    if found is None or name.lower() in _NOT_SECRET_NAMES or value.startswith("[REDACTED"):
        return m.group(0)
    bare = value.strip("\"'")
    if _NOT_SECRET_SUFFIX.search(name) or "://" in bare or bare.startswith(("/", "./", "~/")):
        return m.group(0)  # TOKEN_URL=https://…, SECRET_FILE=/run/secrets/x: where, not what
    word = found.group(1).lower()
    if not _looks_like_a_value(value, op, word):
        return m.group(0)
    if m.string[m.end() : m.end() + 1] in ("(", "["):
        return m.group(0)  # code: cache_key = make_key(user)
    if word == "key" and not (len(bare) >= 20 or (len(bare) >= 8 and _has_digit_and_letter(bare))):
        return m.group(0)  # sort_key=name, primary_key=True: a key name, not a secret
    kind = _assignment_kind(word)
    quote = value[0] if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1 else ""
    return f"{name}{op}{quote}{marker(kind)}{quote}"


_SECRET_VALUE = r"(?P<value>\"[^\"\r\n]{1,512}\"|'[^'\r\n]{1,512}'|[^\s\"'|;&<>()]{1,512})"
# --password X, --token X, --api-key X (the "=" form is an assignment above)
_LONG_OPTION = lazy(
    r"(?P<head>(?<![\w\-])--(?:[a-z0-9]{1,20}-){0,3}"
    r"(?P<word>password|passwd|pass|passphrase|token|api-?key|secret|auth-token|access-token)"
    r"[ \t]{1,3})" + _SECRET_VALUE,
    re.IGNORECASE,
)
# mysql -pPASSWORD (glued), sshpass -p X, docker login -p X
_MYSQL_P = lazy(
    r"(?P<head>\b(?:mysql\w{0,10}|mariadb[\w\-]{0,10})\b[^\r\n|;&]{0,200}?[ \t]-p)"
    r"(?P<value>[^\s\"'|;&<>()\-][^\s\"'|;&<>()]{0,511})"
)
_LOGIN_P = lazy(
    r"(?P<head>\b(?:sshpass|(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane|twine)\b"
    r"[^\r\n|;&]{0,60}?\b(?:login|upload))\b[^\r\n|;&]{0,200}?[ \t]-p[ \t]{0,3})"
    r"(?P<value>[^\s\"'|;&<>()\-][^\s\"'|;&<>()]{0,511})"
)
# curl -u user:pw, --user user:pw, --proxy-user user:pw
_USER_OPTION = lazy(
    r"(?P<head>(?<![\w\-])(?:-u|-U|--user|--proxy-user)[ \t]{0,3}[\"']?[^\s:\"']{1,64}:)"
    r"(?P<value>[^\s\"']{1,256})"
)
# presigned URLs: S3, GCS, CloudFront
_URL_SIGNATURE = lazy(
    r"(?P<head>[?&](?:X-Amz-Signature|X-Amz-Security-Token|X-Goog-Signature|X-Goog-Credential"
    r"|X-Amz-Credential|Signature|Policy)=)(?P<value>[^&\s\"'<>#]{8,4096})",
    re.IGNORECASE,
)
# a token as a URL's user name: https://ghp_xxx@github.com, https://<random>@host
_URL_USER = lazy(
    r"(?P<head>\b(?:https?|git\+https?|wss?)://)(?P<value>[A-Za-z0-9_\-.~%]{16,256})(?=@[A-Za-z0-9\[])"
)
# .npmrc: _auth=, _authToken=, _password=
_NPMRC = lazy(
    r"(?P<head>(?<![A-Za-z0-9])_(?:auth|authToken|password)[ \t]{0,3}=[ \t]{0,3}[\"']?)"
    r"(?P<value>[^\s\"']{3,2048})",
    re.IGNORECASE,
)
_COOKIE_HEADER = lazy(
    r"(?P<head>\b(?:set-)?cookie[\"']?[ \t]{0,3}:[ \t]{0,3})(?P<value>[^\r\n]{1,8192})",
    re.IGNORECASE,
)
_COOKIE_PAIR = lazy(r"(?P<name>[^\s=;,]{1,128})=(?P<value>[^;\r\n]{1,4096})")
_COOKIE_ATTRIBUTES = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "priority", "partitioned", "version"}
)


def _replace_cookies(m: re.Match[str]) -> str:
    def pair(p: re.Match[str]) -> str:
        name, value = p.group("name"), p.group("value").strip()
        if name.lower() in _COOKIE_ATTRIBUTES or not value or value.startswith("[REDACTED"):
            return p.group(0)
        return f"{name}={marker('cookie')}"

    return m.group("head") + _COOKIE_PAIR.sub(pair, m.group("value"))


# netrc: "machine h login u password p" (one line or several)
_NETRC = lazy(
    r"(?P<head>\bmachine[ \t]{1,8}[^\s]{1,253}(?:[ \t]{1,8}(?:login|account)[ \t]{1,8}[^\s]{1,256}){0,2}"
    r"[ \t]{1,8}password[ \t]{1,8})(?P<value>\S{1,256})"
    r"|(?P<head2>(?m:^)[ \t]{0,16}password[ \t]{1,8})(?P<value2>\S{1,256})(?=[ \t]{0,8}(?:\r?\n|\Z))"
)
# pgpass: host:port:database:user:password
_PGPASS = lazy(
    r"(?P<head>(?<![\w:.\-])[A-Za-z0-9_.\-*]{1,253}:(?:\d{1,5}|\*):"
    r"(?=[^\s:]{0,63}[A-Za-z*])[^\s:]{1,63}:(?=[^\s:]{0,63}[A-Za-z*])[^\s:]{1,63}:)"
    r"(?P<value>[^\s:]{1,256})(?![\w:])"
)


def _keep_heads(kind: str) -> Callable[[re.Match[str]], str]:
    """For a pattern with two alternatives (``head``/``value`` and ``head2``/``value2``)."""

    def replace(m: re.Match[str]) -> str:
        head = m.group("head") if m.group("head") is not None else m.group("head2")
        value = m.group("value") if m.group("value") is not None else m.group("value2")
        lowered = value.lower()
        if value.startswith("[REDACTED") or lowered in _PLACEHOLDERS:
            return m.group(0)
        if lowered in _PROSE_AFTER_PASSWORD:
            return m.group(0)
        return head + marker(kind)

    return replace


def _replace_option(m: re.Match[str]) -> str:
    value = m.group("value")
    if not _looks_like_a_value(value, "=") or value.startswith("-"):
        return m.group(0)
    kind = _assignment_kind(m.group("word").replace("-", ""))
    quote = value[0] if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1 else ""
    return f"{m.group('head')}{quote}{marker(kind)}{quote}"


def _replace_user_option(m: re.Match[str]) -> str:
    value = m.group("value")
    if value.isdigit() or value.startswith("[REDACTED") or value.startswith("$"):
        return m.group(0)  # docker -u 1000:1000
    return m.group("head") + marker("password")


def _replace_url_user(m: re.Match[str]) -> str:
    value = m.group("value")
    if value.startswith("[REDACTED") or not _has_digit_and_letter(value):
        return m.group(0)  # https://someone.with.a.long.name@host
    return m.group("head") + marker("url-token")


# a secret word followed by an assignment within a few characters (PASSED, "token limit" and
# the like are common in logs: the assignment rules need not run over such text at all)
_ASSIGNMENT_HINT = lazy(
    r"(?:p(?:ass|wd)|secret|token|key|credential)[\w.\-'\"]{0,64}[ \t]{0,3}[:=]"
)
_OPTION_HINT = lazy(r"--(?:[a-z0-9]{1,20}-){0,3}(?:pass|token|api|secret|auth|access)")
_USER_HINT = lazy(r"(?:-u|--user|--proxy-user)[ \t]{0,3}[\"']?[^\s:\"']{1,64}:")
_URL_USER_HINT = lazy(r"://[a-z0-9_\-.~%]{16,256}@")
_PGPASS_HINT = lazy(r":(?:\d{1,5}|\*):[^\s:]{1,63}:[^\s:]{1,63}:")
_B62 = "A-Za-z0-9"
_RULES: tuple[_Rule, ...] = (
    # Multi-line first, so later rules never see half a key block.
    _Rule("private-key", _PEM_BEGIN, ("private key", "putty-user-key-file"),
          substitute=redact_blocks),
    _shaped("jwt", r"\beyJ[A-Za-z0-9_\-]{8,4096}\.eyJ[A-Za-z0-9_\-]{4,8192}\.[A-Za-z0-9_\-]{0,4096}",
            ["eyj"]),
    # Cloud providers
    _shaped("aws-access-key-id",
            r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b",
            ["akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "aipa", "anpa", "anva",
             "apka"]),
    _Rule("aws-secret-access-key",
          lazy(r"(?P<head>\baws_?secret_?(?:access_?)?key[\"']?[ \t]{0,3}[:=][ \t]{0,3}[\"']?)"
                     r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", re.IGNORECASE),
          ("aws",), _keep_head("aws-secret-access-key")),
    _shaped("gcp-api-key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])", ["aiza"]),
    _shaped("gcp-oauth-token", r"\bya29\.[0-9A-Za-z_\-]{20,2048}", ["ya29."]),
    _Rule("azure-key",
          lazy(r"(?P<head>\b(?:AccountKey|SharedAccessKey|sig)=)"
                     r"(?P<value>[A-Za-z0-9+/%]{20,200}(?:=|%3D){0,2})", re.IGNORECASE),
          ("accountkey=", "sharedaccesskey=", "sig="), _keep_head("azure-key")),
    _shaped("azure-client-secret",
            r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
            ["q~"]),
    _shaped("digitalocean-token", r"\bdo[pra]_v1_[a-f0-9]{64}\b", ["_v1_"]),
    # Version control and package registries
    _shaped("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
            ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]),
    _shaped("gitlab-token",
            r"\b(?:glpat|gloas|gldt|glrt|glcbt|glptt|glft|glimt|glagent|glsoat)-[A-Za-z0-9_\-]{20,255}"
            r"|\bGR1348941[A-Za-z0-9_\-]{20,255}",
            ["glpat-", "gloas-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glimt-",
             "glagent-", "glsoat-", "gr1348941"]),
    _shaped("bitbucket-token", r"\bATBB[A-Za-z0-9_=.\-]{32,255}|\bATCTT3xFfGN0[A-Za-z0-9_=.\-]{20,255}",
            ["atbb", "atctt3xffgn0"]),
    _shaped("atlassian-token", r"\bATATT3xFfGF0[A-Za-z0-9_=.\-]{20,255}", ["atatt3xffgf0"]),
    _shaped("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", ["npm_"]),
    _shaped("pypi-token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,1024}", ["pypi-age"]),
    _shaped("docker-token", r"\bdckr_pat_[A-Za-z0-9_\-]{20,128}", ["dckr_pat_"]),
    _shaped("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,512}", ["hvs.", "hvb.", "hvr."],
            mixed=True),
    # Chat and bots
    _shaped("slack-webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,200}",
            ["hooks.slack.com"]),
    _shaped("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,255}|\bxapp-\d-[A-Za-z0-9\-]{10,255}",
            ["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xapp-"]),
    _shaped("discord-webhook",
            r"https://(?:canary\.|ptb\.)?discord(?:app)?\.com/api/webhooks/\d{5,30}/[A-Za-z0-9_\-]{20,100}",
            ["discord"]),
    _shaped("discord-bot-token",
            r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-])",
            [], mixed=True),
    _shaped("telegram-bot-token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])", [":aa"]),
    # LLM providers (Anthropic and OpenRouter before the generic sk- rule)
    _shaped("anthropic-api-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,255}", ["sk-ant-"]),
    _shaped("openrouter-api-key", r"\bsk-or-v1-[A-Za-z0-9]{32,128}", ["sk-or-"]),
    _shaped("openai-api-key",
            r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,255}(?![A-Za-z0-9_\-])",
            ["sk-"], mixed=True),
    _shaped("huggingface-token", r"\b(?:hf_|api_org_)[A-Za-z0-9]{34}\b", ["hf_", "api_org_"]),
    _shaped("groq-api-key", r"\bgsk_[A-Za-z0-9]{48,64}\b", ["gsk_"]),
    _shaped("xai-api-key", r"\bxai-[A-Za-z0-9]{60,100}\b", ["xai-"]),
    _shaped("replicate-token", r"\br8_[A-Za-z0-9]{37}\b", ["r8_"]),
    _shaped("perplexity-api-key", r"\bpplx-[A-Za-z0-9]{48}\b", ["pplx-"]),
    # Payments, mail and other services
    _shaped("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,247}\b|\bwhsec_[A-Za-z0-9]{32,128}\b",
            ["sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"]),
    _shaped("sendgrid-api-key", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])", ["sg."]),
    _shaped("twilio-api-key", r"\bSK[0-9a-fA-F]{32}\b", ["sk"], mixed=True),
    _shaped("mailgun-api-key", r"\bkey-[0-9a-z]{32}\b", ["key-"], mixed=True),
    _shaped("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
            ["shpat_", "shpca_", "shppa_", "shpss_"]),
    _shaped("linear-api-key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", ["lin_api_", "lin_oauth_"]),
    _shaped("notion-token", r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})\b",
            ["secret_", "ntn_"], mixed=True),
    # More services, each by a prefix of its own (reviewed against the gitleaks rule list)
    _shaped("age-secret-key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
            ["age-secret-key-1"]),
    _shaped("alibaba-access-key", r"\bLTAI[A-Za-z0-9]{20}\b", ["ltai"], mixed=True),
    _shaped("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", ["dapi"], mixed=True),
    _shaped("doppler-token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b", ["dp."]),
    _shaped("dynatrace-token", r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b", ["dt0c01."]),
    _shaped("easypost-api-key", r"\bEZ[AT]K[A-Za-z0-9]{54}\b", ["ezak", "eztk"]),
    _shaped("grafana-token",
            r"\bglc_[A-Za-z0-9+/]{32,400}={0,2}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b",
            ["glc_", "glsa_"]),
    _shaped("new-relic-key", r"\bNR(?:AK|II|JS)-[A-Za-z0-9]{19,32}\b", ["nrak-", "nrii-", "nrjs-"],
            mixed=True),
    _shaped("planetscale-token", r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.\-]{32,64}",
            ["pscale_"]),
    _shaped("postman-api-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", ["pmak-"]),
    _shaped("prefect-api-key", r"\bpnu_[A-Za-z0-9]{36}\b", ["pnu_"]),
    _shaped("pulumi-token", r"\bpul-[a-f0-9]{40}\b", ["pul-"]),
    _shaped("readme-api-key", r"\brdme_[a-z0-9]{70}\b", ["rdme_"]),
    _shaped("rubygems-api-key", r"\brubygems_[a-f0-9]{48}\b", ["rubygems_"]),
    _shaped("brevo-api-key", r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b", ["xkeysib-"]),
    _shaped("sentry-token", r"\bsntry[su]_[A-Za-z0-9+/=_\-]{40,400}", ["sntrys_", "sntryu_"]),
    _shaped("shippo-token", r"\bshippo_(?:live|test)_[a-f0-9]{40}\b", ["shippo_"]),
    _shaped("square-token", r"\b(?:sq0atp|sq0csp|sq0idp)-[A-Za-z0-9_\-]{22,43}(?![A-Za-z0-9_\-])|\bEAAA[A-Za-z0-9_\-]{60}(?![A-Za-z0-9_\-])",
            ["sq0atp-", "sq0csp-", "sq0idp-", "eaaa"], mixed=True),
    _shaped("typeform-token", r"\btfp_[A-Za-z0-9_\-.=]{59}", ["tfp_"]),
    _shaped("onepassword-token", r"\bops_eyJ[A-Za-z0-9+/=_\-]{100,4096}", ["ops_eyj"]),
    _shaped("mapbox-secret-token", r"\bsk\.eyJ[A-Za-z0-9_\-]{20,500}\.[A-Za-z0-9_\-]{20,100}",
            ["sk.eyj"]),
    _shaped("flutterwave-key", r"\bFLW(?:SECK|PUBK)(?:_TEST)?-[a-h0-9]{32}-X\b", ["flwseck", "flwpubk"]),
    _shaped("infracost-api-key", r"\bico-[A-Za-z0-9]{32}\b", ["ico-"], mixed=True),
    _shaped("heroku-api-key", r"\bHRKU-AA[A-Za-z0-9_\-]{58}", ["hrku-"]),
    _shaped("frameio-token", r"\bfio-u-[A-Za-z0-9_=\-]{64}", ["fio-u-"]),
    _shaped("duffel-token", r"\bduffel_(?:test|live)_[A-Za-z0-9_=\-]{43}", ["duffel_"]),
    _shaped("scalingo-token", r"\btk-us-[A-Za-z0-9_\-]{48}", ["tk-us-"]),
    _shaped("clojars-token", r"\bCLOJARS_[a-z0-9]{60}\b", ["clojars_"]),
    _shaped("terraform-cloud-token", r"\b[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}", [".atlasv1."]),
    _shaped("mailchimp-api-key", r"\b[0-9a-f]{32}-us\d{1,2}\b", ["-us"], mixed=True),
    _shaped("cloudflare-origin-ca-key", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b", ["v1.0-"]),
    _shaped("flyio-token", r"\bfo1_[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])|\bfm[12][ar]?_[A-Za-z0-9+/]{100,4096}={0,3}",
            ["fo1_", "fm1", "fm2"]),
    _shaped("sourcegraph-token", r"\bsgp_(?:[a-f0-9]{16}_)?[a-f0-9]{40}\b", ["sgp_"]),
    # Context rules last: they keep their surroundings and skip what is already redacted.
    _Rule("url-password", _URL_PASSWORD, ("://",), _replace_url),
    _Rule("authorization", _AUTH_HEADER, ("authorization",), _keep_head("authorization")),
    _Rule("bearer-token", _BEARER, ("bearer",), _keep_head("bearer-token")),
    _Rule("assignment", _ASSIGNMENT, ("pass", "pwd", "secret", "token", "key", "credential"),
          _replace_assignment, hint=_ASSIGNMENT_HINT),
    _Rule("env-name", _ENV_NAME, ("pass", "pwd", "secret", "token", "key", "credential"),
          _replace_env_name, hint=_ASSIGNMENT_HINT),
    _Rule("option", _LONG_OPTION, ("--",), _replace_option, hint=_OPTION_HINT),
    _Rule("password", _MYSQL_P, ("mysql", "mariadb"), _keep_head("password")),
    _Rule("password", _LOGIN_P, ("sshpass", "login", "upload"), _keep_head("password")),
    _Rule("password", _USER_OPTION, ("-u", "-U", "--user", "--proxy-user"), _replace_user_option, hint=_USER_HINT),
    _Rule("url-signature", _URL_SIGNATURE, ("signature=", "credential=", "security-token=", "policy="),
          _keep_head("url-signature")),
    _Rule("url-token", _URL_USER, ("://",), _replace_url_user, hint=_URL_USER_HINT),
    _Rule("npmrc-auth", _NPMRC, ("_auth", "_password"), _keep_head("npmrc-auth")),
    _Rule("cookie", _COOKIE_HEADER, ("cookie",), _replace_cookies),
    _Rule("netrc-password", _NETRC, ("machine",), _keep_heads("netrc-password")),
    _Rule("pgpass-password", _PGPASS, (":",), _keep_head("pgpass-password"),
          hint=_PGPASS_HINT),
)  # fmt: skip

# What can appear inside ``[REDACTED:<kind>]``; "assignment", "env-name" and "option" stand
# for the four kinds they emit.
KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(
        k
        for rule in _RULES
        for k in (
            ("password", "token", "secret", "api-key")
            if rule.kind in ("assignment", "env-name", "option")
            else (rule.kind,)
        )
    )
)


# Which rules a text can need, found with one pass over all markers: most texts (paths, short
# lines) hold none, and then only the marker-less rules run.
_RULES_BY_MARKER: dict[str, list[int]] = {}
for _index, _rule in enumerate(_RULES):
    for _marker in _rule.markers:
        _RULES_BY_MARKER.setdefault(_marker, []).append(_index)
_UNMARKED = frozenset(i for i, rule in enumerate(_RULES) if not rule.markers)


def _candidates(lowered: str, after: int, marks: Iterable[str] = _RULES_BY_MARKER) -> list[int]:
    """Indexes past ``after`` of the rules whose markers occur in ``lowered``, in rule order;
    ``marks``: the markers to look for (those not among them are known to be absent)."""
    found = set(_UNMARKED)
    for mark in marks:
        if mark in lowered:
            found.update(_RULES_BY_MARKER[mark])
    return sorted(i for i in found if i > after)


# What this process redacted (short texts only) and what came out. What came out is kept as
# its own result too: redaction is idempotent (a Hypothesis test says so), so a path the
# snapshot stored redacted costs a look-up when the brief quotes it, not a second redaction.
_MEMO: dict[str, str] = {}
_MEMO_MAX = 8192  # entries; the memo starts over past it
_MEMO_TEXT_MAX = 1024  # characters: longer texts (log tails, tool output) are not kept


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    done = _MEMO.get(text)
    if done is not None:
        return done
    lowered = text.lower()
    return _remember(text, _redact_rules(text, lowered, _candidates(lowered, -1)))


def redact_all(texts: Sequence[str]) -> list[str]:
    """``[redact(text) for text in texts]``, the markers of the texts not redacted before
    looked for once in all of them joined: a brief's hundreds of changed paths hold few
    markers, if any."""
    todo = [text for text in dict.fromkeys(texts) if text and text not in _MEMO]
    lowered_all = [text.lower() for text in todo]
    joined = "\n".join(lowered_all)
    present = [mark for mark in _RULES_BY_MARKER if mark in joined]
    done = {
        text: _remember(text, _redact_rules(text, lowered, _candidates(lowered, -1, present)))
        for text, lowered in zip(todo, lowered_all, strict=True)
    }
    return [done[text] if text in done else redact(text) for text in texts]


def _remember(text: str, redacted: str) -> str:
    if len(text) <= _MEMO_TEXT_MAX:
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.clear()
        _MEMO[text] = redacted
        if len(redacted) <= _MEMO_TEXT_MAX:
            _MEMO[redacted] = redacted
    return redacted


def _redact_rules(text: str, lowered: str, todo: list[int]) -> str:
    """``text`` through the rules ``todo`` (indexes, in order; ``lowered`` is ``text.lower()``)."""
    hinted: dict[re.Pattern[str], bool] = {}
    k = 0
    while k < len(todo):
        index = todo[k]
        k += 1
        rule = _RULES[index]
        if rule.hint is not None:
            if rule.hint not in hinted:
                hinted[rule.hint] = rule.hint.search(lowered) is not None
            if not hinted[rule.hint]:
                continue
        if rule.substitute is not None:
            new = rule.substitute(text)
        else:
            assert rule.replace is not None
            new = rule.pattern.sub(rule.replace, text)
        if new != text:  # the later rules look at the text as it is now
            text = new
            lowered = text.lower()
            hinted.clear()
            todo, k = _candidates(lowered, index), 0
    return text


def redact_lines(lines: Sequence[str]) -> list[str]:
    """Each line redacted; one output line per input line (a key block spanning several lines
    becomes one marker per line, so indexes stay aligned: a header with no END takes every
    line after it, an END with no header the base64 lines before it)."""
    out: list[str] = []
    inside_key = False
    for line in lines:
        if inside_key:
            end = _PEM_END.search(line)
            if end is None:
                out.append(marker("private-key"))
                continue
            inside_key = False
            line = marker("private-key") + line[end.end() :]
        else:
            end = _PEM_END.search(line)
            begin = _PEM_BEGIN.search(line)
            if end is not None and (begin is None or begin.start() > end.start()):
                back = len(out)
                while back > 0 and (
                    _PEM_BODY_LINE.fullmatch(lines[back - 1])
                    or _PEM_HEADER_FIELD.fullmatch(lines[back - 1])
                ):
                    back -= 1
                    out[back] = marker("private-key")
                line = marker("private-key") + line[end.end() :]
        begin = _PEM_BEGIN.search(line)
        if begin is not None and not _PEM_END.search(line, begin.end()):
            # a lone header line: the lines that follow are the key until its END line
            inside_key = True
            out.append(redact(line[: begin.start()]) + marker("private-key"))
            continue
        out.append(redact(line))
    return out
