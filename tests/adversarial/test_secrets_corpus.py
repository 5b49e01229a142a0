"""Secrets never leave the machine's own files (issue 6, part 4).

A corpus of fake, format-valid secrets of more than 60 kinds, built at run time (so this file
holds nothing a scanner would flag), is planted everywhere resume-kit reads untrusted text: log
files, the agent's transcript (request, todos, tool errors), the output of failing verify
commands, commit subjects, file names and pytest's last-failed test ids. Then every output is
searched for every secret, whole or in part (any 12 characters of its random body):

* the brief in all three formats, at a small and a large budget, and in hook mode;
* the snapshot JSON (printed and stored) and ``status --json``;
* progress.yaml (``last_failure`` excerpts), ``verify-next`` and ``run`` output (run excerpts);
* the request bodies a ``brief --summarize`` sends to a loopback Messages API server.

A corpus of ordinary lines that look random (commit shas, UUIDs, lock-file hashes, base64 test
data, digests, code) measures the false positives of the same redaction; the rate is printed
and documented in docs/reliability.md.
"""

from __future__ import annotations

import base64
import json
import os
import random
import string
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from resume_kit.infra.redact import redact
from tests.conftest import git, run_cli

SEED = int(os.environ.get("RESUME_KIT_SECRETS_SEED", str(random.randrange(10**9))))
_rng = random.Random(SEED)
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def fake(chars: str, n: int) -> str:
    """``n`` random characters from ``chars``, with at least one digit and one letter."""
    while True:
        value = "".join(_rng.choice(chars) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


@dataclass(frozen=True)
class Secret:
    kind: str
    value: str  # the secret as it appears in text
    body: str  # its random part: no 12 characters of it may appear in any output
    context: str  # a log line holding it; "{}" marks the place
    # How it is planted in short places (a commit subject, a test id, a file name): shaped
    # secrets stand alone; a secret known only by what stands next to it (``password=``)
    # keeps that context, since a bare random string is left alone on purpose.
    short: str = "{}"

    @property
    def line(self) -> str:
        return self.context.replace("{}", self.value)

    @property
    def planted(self) -> str:
        return self.short.replace("{}", self.value)

    @property
    def one_line(self) -> bool:
        return "\n" not in self.value and "\\n" not in self.value

    def pieces(self, width: int = 12) -> list[str]:
        body = self.body.replace("\n", "")
        return [body[i : i + width] for i in range(0, max(1, len(body) - width + 1), 3)]


def shaped(
    kind: str, prefix: str, chars: str, n: int, context: str, suffix: str = "", short: str = "{}"
) -> Secret:
    body = fake(chars, n)
    return Secret(kind, prefix + body + suffix, body, context, short)


def b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def build_corpus() -> list[Secret]:
    letters_pw = "".join(_rng.choice(string.ascii_lowercase) for _ in range(18))
    jwt_sig = fake(URLSAFE, 43)
    jwt = (
        b64url({"alg": "HS256", "typ": "JWT"})
        + "."
        + b64url({"sub": fake(HEX, 10), "name": "Fake Person"})
        + "."
        + jwt_sig
    )
    pem_body = "\n".join(fake(B64, 64) for _ in range(4))
    ssh_body = "\n".join(fake(B64, 70) for _ in range(5))
    open_body = "\n".join(fake(B64, 64) for _ in range(3))
    webhook = fake(ALNUM, 24)
    discord = fake(URLSAFE, 68)
    # fmt: off
    return [
        shaped("aws-access-key-id", "AKIA", UPPER_DIGITS, 16, "error: AWS_ACCESS_KEY_ID={} rejected"),
        shaped("aws-secret-access-key", "", B64, 40, "error: aws_secret_access_key = {} is invalid",
               short="aws_secret_access_key={}"),
        shaped("gcp-api-key", "AIza", URLSAFE, 35, "error: API key {} not valid"),
        shaped("gcp-oauth-token", "ya29.", URLSAFE, 80, "error: token {} expired"),
        shaped("azure-key", "", B64, 86, "error: AccountKey={}== denied", short="AccountKey={}=="),
        shaped("azure-client-secret", fake(ALNUM, 3) + "8Q~", URLSAFE, 34, "error: secret {} wrong"),
        shaped("digitalocean-token", "dop_v1_", HEX, 64, "error: DO {} unauthorized"),
        shaped("github-token", "ghp_", ALNUM, 36, "fatal: remote rejected {} (403)"),
        shaped("github-fine-grained-pat", "github_pat_", ALNUM + "_", 82, "error: pat {} revoked"),
        shaped("gitlab-token", "glpat-", URLSAFE, 20, "error: GitLab {} forbidden"),
        shaped("bitbucket-token", "ATBB", ALNUM, 32, "error: app password {} refused"),
        shaped("atlassian-token", "ATATT3xFfGF0", URLSAFE, 180, "error: jira {} refused"),
        shaped("npm-token", "npm_", ALNUM, 36, "npm ERR! code E401 token {}"),
        shaped("pypi-token", "pypi-AgEIcHlwaS5vcmc", URLSAFE, 70, "error: twine -p {} 403"),
        shaped("docker-token", "dckr_pat_", URLSAFE, 27, "error: docker login -p {} failed"),
        shaped("vault-token", "hvs.", URLSAFE, 90, "error: VAULT_TOKEN {} expired"),
        shaped("slack-token", "xoxb-1234567890-1234567890123-", ALNUM, 24, "error: slack {} invalid_auth"),
        Secret("slack-webhook", "https://hooks.slack.com/services/T01234567/B01234567/" + webhook,
               webhook, "error: posting to {} failed"),
        Secret("discord-webhook", "https://discord.com/api/webhooks/123456789012345678/" + discord,
               discord, "error: hook {} 401"),
        shaped("telegram-bot-token", "123456789:AA", URLSAFE, 33, "error: bot {} unauthorized"),
        shaped("anthropic-api-key", "sk-ant-api03-", URLSAFE, 93, "error: using {} gave 401", suffix="AA"),
        shaped("openai-api-key", "sk-proj-", URLSAFE, 120, "error: OpenAI key {} invalid"),
        shaped("openrouter-api-key", "sk-or-v1-", HEX, 64, "error: router key {} invalid"),
        shaped("huggingface-token", "hf_", ALNUM, 34, "error: hf login --token {} failed"),
        shaped("groq-api-key", "gsk_", ALNUM, 52, "error: groq {} invalid"),
        shaped("stripe-key", "sk_live_", ALNUM, 99, "error: stripe.api_key {} revoked"),
        shaped("sendgrid-api-key", "SG." + fake(URLSAFE, 22) + ".", URLSAFE, 43, "error: mail {} 401"),
        shaped("twilio-api-key", "SK", HEX, 32, "error: twilio {} refused"),
        shaped("mailgun-api-key", "key-", LOWER_DIGITS, 32, "error: mg {} refused"),
        shaped("shopify-token", "shpat_", HEX, 32, "error: shop {} 401"),
        shaped("linear-api-key", "lin_api_", ALNUM, 40, "error: linear {} 401"),
        shaped("notion-token", "ntn_", ALNUM, 46, "error: notion {} 401"),
        Secret("jwt", jwt, jwt_sig, "error: session cookie {} rejected"),
        Secret("private-key", "-----BEGIN RSA PRIVATE KEY-----\n" + pem_body
               + "\n-----END RSA PRIVATE KEY-----", pem_body, "error: bad key:\n{}"),
        shaped("url-password", "", ALNUM, 14, "fatal: could not read from https://bob:{}@git.example.com/r.git",
               short="https://bob:{}@git.example.com"),
        shaped("password-assignment", "", ALNUM, 14, "error: login failed with DB_PASSWORD={}",
               short="DB_PASSWORD={}"),
        shaped("token-assignment", "", ALNUM, 30, "error: GITHUB_TOKEN: {} rejected",
               short="GITHUB_TOKEN={}"),
        shaped("api-key-header", "", ALNUM, 32, "error: X-Api-Key: {} rejected", short="api_key={}"),
        shaped("bearer-token", "", URLSAFE, 40, "error: sent Authorization: Bearer {} got 401",
               short="Bearer {}"),
        shaped("client-secret", "", ALNUM, 24, "error: client_secret='{}' invalid",
               short="client_secret={}"),
        # more services (issue 12 item 7; reviewed against the gitleaks rule list)
        shaped("age-secret-key", "AGE-SECRET-KEY-1", BECH32, 58, "error: age -i key {} bad"),
        shaped("alibaba-access-key", "LTAI", ALNUM, 20, "error: aliyun {} denied"),
        shaped("databricks-token", "dapi", HEX, 32, "error: databricks {} 403"),
        shaped("doppler-token", "dp.pt.", ALNUM, 43, "error: doppler {} invalid"),
        shaped("dynatrace-token", "dt0c01." + fake(UPPER_DIGITS, 24) + ".", UPPER_DIGITS, 64,
               "error: dynatrace {} 401"),
        shaped("easypost-api-key", "EZAK", ALNUM, 54, "error: easypost {} 401"),
        shaped("grafana-token", "glc_", B64, 60, "error: grafana cloud {} 401"),
        shaped("grafana-service-account", "glsa_", ALNUM, 32, "error: grafana {} 401",
               suffix="_0a1b2c3d"),
        shaped("new-relic-key", "NRAK-", UPPER_DIGITS, 27, "error: newrelic {} 403"),
        shaped("planetscale-token", "pscale_tkn_", URLSAFE, 43, "error: pscale {} 401"),
        shaped("postman-api-key", "PMAK-" + fake(HEX, 24) + "-", HEX, 34, "error: postman {} 401"),
        shaped("prefect-api-key", "pnu_", ALNUM, 36, "error: prefect {} 401"),
        shaped("pulumi-token", "pul-", HEX, 40, "error: pulumi login {} failed"),
        shaped("readme-api-key", "rdme_", LOWER_DIGITS, 70, "error: rdme {} 401"),
        shaped("rubygems-api-key", "rubygems_", HEX, 48, "error: gem push {} 401"),
        shaped("brevo-api-key", "xkeysib-" + fake(HEX, 64) + "-", ALNUM, 16, "error: brevo {} 401"),
        shaped("sentry-token", "sntrys_", B64, 80, "error: sentry-cli {} 401"),
        shaped("shippo-token", "shippo_live_", HEX, 40, "error: shippo {} 401"),
        shaped("square-token", "sq0atp-", URLSAFE, 22, "error: square {} 401"),
        shaped("typeform-token", "tfp_", URLSAFE, 59, "error: typeform {} 401"),
        shaped("onepassword-token", "ops_eyJ", B64, 200, "error: op {} invalid"),
        shaped("mapbox-secret-token", "sk.eyJ1IjoiZmFrZSIsImEiOiJ4In0.", URLSAFE, 22,
               "error: mapbox {} 401"),
        shaped("flutterwave-key", "FLWSECK_TEST-", "abcdefgh0123456789", 32, "error: flw {} 401",
               suffix="-X"),
        shaped("infracost-api-key", "ico-", ALNUM, 32, "error: infracost {} 401"),
        shaped("heroku-api-key", "HRKU-AA", URLSAFE, 58, "error: heroku {} 401"),
        shaped("frameio-token", "fio-u-", URLSAFE, 64, "error: frame.io {} 401"),
        shaped("duffel-token", "duffel_test_", URLSAFE, 43, "error: duffel {} 401"),
        shaped("scalingo-token", "tk-us-", URLSAFE, 48, "error: scalingo {} 401"),
        shaped("clojars-token", "CLOJARS_", LOWER_DIGITS, 60, "error: lein deploy {} 401"),
        shaped("terraform-cloud-token", fake(LOWER_DIGITS, 14) + ".atlasv1.", URLSAFE, 64,
               "error: terraform login {} 401"),
        shaped("mailchimp-api-key", "", HEX, 32, "error: mailchimp {} 401", suffix="-us12"),
        shaped("cloudflare-origin-ca-key", "v1.0-" + fake(HEX, 24) + "-", HEX, 146,
               "error: cloudflare {} 403"),
        shaped("flyio-token", "fo1_", URLSAFE, 43, "error: flyctl {} 401"),
        shaped("sourcegraph-token", "sgp_", HEX, 40, "error: src {} 401"),
        # credentials known by what stands next to them (issue 12 item 7)
        shaped("mysql-password-option", "", ALNUM, 16, "error: mysql -uroot -p{} -h db failed",
               short="mysql -p{}"),
        shaped("login-password-option", "", ALNUM, 16, "error: sshpass -p {} ssh deploy@h denied",
               short="sshpass -p {}"),
        shaped("docker-login-password", "", ALNUM, 20, "error: docker login -u bob -p {} r.io",
               short="docker login -p {}"),
        shaped("long-password-option", "", ALNUM, 16, "error: mysql --password {} -h db",
               short="--password {}"),
        shaped("long-token-option", "", ALNUM, 30, "error: gh auth login --token {} failed",
               short="--token {}"),
        shaped("curl-user-password", "", ALNUM, 16, "error: curl -u deploy:{} https://x.io 401",
               short="curl -u deploy:{}"),
        shaped("pgpassword", "", ALNUM, 16, "error: PGPASSWORD={} psql -h db failed",
               short="PGPASSWORD={}"),
        shaped("presigned-url", "", HEX, 64,
               "error: GET https://b.s3.amazonaws.com/k?X-Amz-Date=20260101T000000Z"
               "&X-Amz-Signature={} 403", short="k?X-Amz-Signature={}"),
        shaped("url-user-token", "", ALNUM, 40, "fatal: https://{}@github.com/org/r.git denied",
               short="https://{}@github.com"),
        shaped("npmrc-auth-token", "", ALNUM, 36,
               "npm ERR! //registry.npmjs.org/:_authToken={} invalid", short="_authToken={}"),
        shaped("npmrc-auth", "", B64, 40, "npm ERR! _auth={}== rejected", short="_auth={}"),
        shaped("cookie-header", "", URLSAFE, 32, "error: sent Cookie: session={}; theme=dark",
               short="Cookie: session={}"),
        shaped("set-cookie-header", "", URLSAFE, 32, "< Set-Cookie: sid={}; Path=/; HttpOnly",
               short="Set-Cookie: sid={}"),
        shaped("netrc-password", "", ALNUM, 16,
               "error: ~/.netrc: machine api.example.com login bob password {}",
               short="machine h login u password {}"),
        shaped("pgpass-password", "", ALNUM, 16,
               "error: ~/.pgpass line db.example.com:5432:app:alice:{}",
               short="db:5432:app:alice:{}"),
        Secret("password-colon-letters", letters_pw, letters_pw, "error: password: {} rejected",
               "password: {}"),
        shaped("env-apitoken", "", ALNUM, 24, "error: APITOKEN={} invalid", short="APITOKEN={}"),
        shaped("env-dbpassword", "", ALNUM, 16, "error: dbpassword={} denied",
               short="dbpassword={}"),
        shaped("env-smtppass", "", ALNUM, 16, "error: SMTPPASS={} denied", short="SMTPPASS={}"),
        shaped("env-encryption-key", "", ALNUM, 32, "error: ENCRYPTION_KEY={} wrong",
               short="ENCRYPTION_KEY={}"),
        Secret("openssh-private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + ssh_body
               + "\n-----END OPENSSH PRIVATE KEY-----", ssh_body, "key file:\n{}"),
        Secret("unterminated-private-key", "-----BEGIN PRIVATE KEY-----\n" + open_body,
               open_body, "loading\n{}"),
    ]
    # fmt: on


CORPUS = build_corpus()


def leaks(text: str, corpus: list[Secret] = CORPUS) -> list[str]:
    """The kinds of secret whose value, or any 12 characters of its random body, are in text."""
    found = []
    for secret in corpus:
        if secret.value in text or any(piece in text for piece in secret.pieces()):
            found.append(secret.kind)
    return found


def test_the_corpus_has_at_least_60_kinds_and_every_one_is_caught() -> None:
    assert len({s.kind for s in CORPUS}) >= 60
    missed = [s.kind for s in CORPUS if leaks(redact(s.line), [s])]
    assert missed == [], f"seed {SEED}"


# --------------------------------------------------------------------------- planting


def chunks(items: list[Secret], size: int) -> list[list[Secret]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def claude_session(repo: Path, secrets: list[Secret]) -> None:
    from resume_kit.facts.transcripts.claude_code import config_dir, escaped_names

    folder = config_dir() / "projects" / sorted(escaped_names(repo))[0]
    folder.mkdir(parents=True, exist_ok=True)
    stamp = "2026-11-29T08:00:00Z"
    base = {"cwd": str(repo), "sessionId": "s-1", "timestamp": stamp}
    records: list[dict[str, object]] = []
    for n, secret in enumerate(secrets):
        records.append({**base, "type": "assistant", "uuid": f"a{n}", "message": {
            "role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "Bash",
                                               "input": {"command": f"deploy --key {secret.planted}"}}]}})  # fmt: skip
        records.append({**base, "type": "user", "uuid": f"u{n}", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}",
                                         "is_error": True, "content": secret.line}]}})  # fmt: skip
    todos = [{"content": f"rotate {s.planted}", "status": "completed", "activeForm": "x"}
             for s in secrets if s.one_line]  # fmt: skip
    records.append({**base, "type": "assistant", "uuid": "todo", "message": {"role": "assistant",
                    "content": [{"type": "tool_use", "id": "tw", "name": "TodoWrite",
                                 "input": {"todos": todos}}]}})  # fmt: skip
    for n, secret in enumerate(secrets):  # the newest requests each carry one secret
        records.append({**base, "type": "user", "uuid": f"r{n}", "message": {
            "role": "user", "content": f"please use {secret.planted} to deploy"}})  # fmt: skip
    (folder / "s-1.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")


def plant(repo: Path) -> dict[str, list[Secret]]:
    """Every secret in logs and failing verify output; one-line ones also in the transcript,
    commit subjects, pytest test ids and file names. Returns what went where."""
    one_line = [s for s in CORPUS if s.one_line]
    where: dict[str, list[Secret]] = {}
    # logs: at most 40 error lines are kept per log, so several logs
    (repo / "logs").mkdir()
    for n, group in enumerate(chunks(CORPUS, 12)):
        (repo / "logs" / f"build-{n}.log").write_text(
            "starting\n" + "\n".join(s.line for s in group) + "\nexiting\n"
        )
    where["logs"] = CORPUS
    # verify output: one failing unit per group (an excerpt keeps 20 lines)
    (repo / "out").mkdir()
    for n, group in enumerate(chunks(CORPUS, 8)):
        (repo / "out" / f"fail-{n}.txt").write_text("\n".join(s.line for s in group) + "\n")
    where["verify"] = CORPUS
    git(repo, "add", "out")  # tracked, so the untracked names planted in it are listed one by one
    git(repo, "commit", "-q", "-m", "verify outputs")
    # commit subjects (the last ten are read)
    for secret in one_line[-10:]:
        (repo / "history.txt").write_text(secret.kind + "\n")
        git(repo, "add", "history.txt")
        git(repo, "commit", "-q", "-m", f"deploy: rotate {secret.planted}")
    where["commits"] = one_line[-10:]
    # file names (untracked), for the ones a file name can hold; the name is the secret alone
    # (glued to other text, ``cred-<secret>.txt``, some shapes are no longer recognisable:
    # see "Known limits" in docs/reliability.md)
    named = [s for s in one_line if "/" not in s.planted and len(s.planted) < 200]
    for secret in named:
        (repo / "out" / secret.planted).write_text("x\n")
    where["file names"] = named
    # pytest's last-failed ids
    cache = repo / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    (cache / "lastfailed").write_text(
        json.dumps({f"tests/test_auth.py::test_login[{s.planted}]": True for s in one_line[:15]})
    )
    where["tests"] = one_line[:15]
    claude_session(repo, one_line[:12])
    where["transcript"] = one_line[:12]
    return where


# --------------------------------------------------------------------------- the pipeline


def cli(
    repo: Path,
    *args: str,
    ok: tuple[int, ...] = (0,),
    env: dict[str, str] | None = None,
    input: str | None = None,
) -> str:
    result = run_cli(*args, cwd=repo, env={"RESUME_KIT_TRUST": "all", **(env or {})}, input=input)
    assert result.code in ok, f"{args}: exit {result.code}: {result.stderr[-2000:]}"
    return result.stdout + "\n" + result.stderr


def test_no_secret_reaches_any_output(repo: Path) -> None:
    where = plant(repo)
    cli(repo, "init", "--goal", "Deploy the service")
    for n in range(len(chunks(CORPUS, 8))):
        cli(repo, "add", f"Deploy part {n}", "--id", f"part-{n}", "--verify",
            f"cat out/fail-{n}.txt; exit 1")  # fmt: skip
    outputs: dict[str, str] = {}
    outputs["run --json"] = cli(repo, "run", "--keep-going", "--json", ok=(1,))
    outputs["run"] = cli(repo, "run", "--keep-going", ok=(1,))
    outputs["verify-next"] = cli(repo, "verify-next", "--unit", "part-0", ok=(1,))
    outputs["verify-next --json"] = cli(repo, "verify-next", "--unit", "part-1", "--json", ok=(1,))
    outputs["progress.yaml"] = (repo / ".resume-kit" / "progress.yaml").read_text()
    assert "[REDACTED:" in outputs["progress.yaml"], "the failures never reached last_failure"
    outputs["snapshot --json"] = cli(repo, "snapshot", "--json")
    outputs["status --json"] = cli(repo, "status", "--json")
    for fmt in ("markdown", "json", "claude-hook"):
        for budget in ("300", "1500", "30000"):
            outputs[f"brief {fmt} {budget}"] = cli(
                repo, "brief", "--format", fmt, "--max-tokens", budget
            )
    outputs["brief hook mode"] = cli(
        repo, "brief", "--format", "claude-hook", input=json.dumps({"cwd": str(repo)})
    )
    outputs["brief -o"] = cli(repo, "brief", "-o", str(repo.parent / "brief.md"))
    outputs["brief file"] = (repo.parent / "brief.md").read_text()

    from tests.messages_server import Behaviour, MessagesServer

    reply = json.dumps({"done": ["x"], "key_results": ["y"], "todo": ["z"], "references": []})
    with MessagesServer([Behaviour.ok(reply)]) as server:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
        outputs["brief --summarize"] = cli(repo, "brief", "--summarize", env=env)
        assert server.bodies, "no request reached the loopback Messages API"
        for n, body in enumerate(server.bodies):
            outputs[f"API request {n}"] = body.decode("utf-8")
    for path in sorted((repo / ".resume-kit" / "snapshots").glob("*.json")):
        outputs[f"stored {path.name}"] = path.read_text()

    found = {name: kinds for name, text in outputs.items() if (kinds := leaks(text))}
    assert found == {}, f"seed {SEED}: secrets leaked: {found}"

    snapshot = json.loads(
        (sorted((repo / ".resume-kit" / "snapshots").glob("*.json"))[-1]).read_text()
    )
    markers = {
        "logs": sum(
            "[REDACTED:" in line for log in snapshot["logs"] for line in log["error_lines"]
        ),
        "commits": sum("[REDACTED:" in c["subject"] for c in snapshot["recent_commits"]),
        "file names": sum("[REDACTED:" in e["path"] for e in snapshot["changes"]["untracked"]),
        "tests": sum("[REDACTED:" in t for t in snapshot["tests"]["pytest_last_failed"]),
        "transcript": json.dumps(snapshot["transcript"]).count("[REDACTED:"),
    }
    # the secrets did flow through every reader (else this test would prove nothing)
    for place, count in markers.items():
        assert count > 0, (place, markers)
    assert markers["commits"] == len(where["commits"])
    print(f"{len(CORPUS)} secrets of {len({s.kind for s in CORPUS})} kinds, planted in "
          + ", ".join(f"{k} ({len(v)})" for k, v in where.items())
          + f"; {len(outputs)} outputs searched, 0 leaks; seed {SEED}")  # fmt: skip


# --------------------------------------------------------------------------- false positives


def _hex(n: int) -> str:
    return "".join(_rng.choice(HEX) for _ in range(n))


def _b64(n_bytes: int) -> str:
    return base64.b64encode(_rng.randbytes(n_bytes)).decode()


def _word() -> str:
    return _rng.choice(["parse", "extract", "load", "user", "session", "auth", "config", "cache"])


ORDINARY_TEMPLATES: list[Callable[[], str]] = [
    lambda: f"commit {_hex(40)}",
    lambda: f"{_hex(7)} Merge pull request #{_rng.randint(1, 999)} from org/{_word()}",
    lambda: f"HEAD is now at {_hex(12)} fix {_word()} timeout",
    lambda: f"Resume-Unit: doc-{_rng.randint(1, 999):03d} (evidence {_hex(40)})",
    lambda: f"request id {uuid.UUID(int=_rng.getrandbits(128))}",
    lambda: (
        f'"sessionId": "{uuid.UUID(int=_rng.getrandbits(128))}", "uuid": "{uuid.UUID(int=_rng.getrandbits(128))}"'
    ),
    lambda: f'      "integrity": "sha512-{base64.b64encode(_rng.randbytes(64)).decode()}",',
    lambda: f'    {{file = "{_word()}-1.0-py3-none-any.whl", hash = "sha256:{_hex(64)}"}},',
    lambda: f'checksum = "{_hex(64)}"',
    lambda: f"golang.org/x/{_word()} v0.{_rng.randint(1, 30)}.0 h1:{_b64(32)}",
    lambda: f'  resolved "https://registry.yarnpkg.com/{_word()}/-/{_word()}-1.2.3.tgz#{_hex(40)}"',
    lambda: f"    --hash=sha256:{_hex(64)} \\",
    lambda: f"  resolution: {{integrity: sha512-{_b64(64)}}}",
    lambda: f"FROM python:3.12-slim@sha256:{_hex(64)}",
    lambda: f"{_hex(32)}  dist/{_word()}.tar.gz",
    lambda: f'ETag: "{_hex(32)}"',
    lambda: f"data = {_b64(_rng.randint(24, 90))!r}",
    lambda: f'expected = base64.b64decode("{_b64(48)}")',
    lambda: f'  <img src="data:image/png;base64,{_b64(60)}">',
    lambda: f"assert digest == bytes.fromhex('{_hex(64)}')",
    lambda: f"static/js/main.{_hex(8)}.chunk.js   {_rng.randint(10, 900)}.{_rng.randint(1, 99)} kB",
    lambda: (
        f"pod/{_word()}-{_hex(9)}-{''.join(_rng.choice(LOWER_DIGITS) for _ in range(5))} 1/1 Running"
    ),
    lambda: f"arn:aws:iam::{_rng.randint(10**11, 10**12 - 1)}:role/{_word()}-deployer",
    lambda: f"x-amz-request-id: {''.join(_rng.choice(UPPER_DIGITS) for _ in range(16))}",
    lambda: (
        f"01{''.join(_rng.choice('0123456789ABCDEFGHJKMNPQRSTVWXYZ') for _ in range(24))} created"
    ),
    lambda: f"    {_word()}_token = get_{_word()}_token(user)",
    lambda: "    password = os.environ['DB_PASSWORD']",
    lambda: f"def {_word()}(user: str, password: str, token: str | None = None) -> bool:",
    lambda: f"    self.{_word()}_secret = settings.{_word().upper()}_SECRET",
    lambda: 'headers = {"Authorization": f"Bearer {token}"}',
    lambda: f"E       KeyError: '{_rng.choice(['token', 'password', 'api_key', 'secret'])}'",
    lambda: (
        f"FAILED tests/test_auth.py::test_{_word()}_token_refresh - AssertionError: assert {_rng.randint(200, 500)} == 200"
    ),
    lambda: (
        f"error: invalid token at line {_rng.randint(1, 400)}: unexpected '{_rng.choice('{}[]')}'"
    ),
    lambda: f"input_tokens: {_rng.randint(1, 99999)}, output_tokens: {_rng.randint(1, 9999)}",
    lambda: f"max_tokens={_rng.randint(100, 4000)} temperature=0.{_rng.randint(0, 9)}",
    lambda: (
        f"https://github.com/org/{_word()}/pull/{_rng.randint(1, 9999)}#issuecomment-{_rng.randint(10**8, 10**9)}"
    ),
    lambda: f"git@github.com:org/{_word()}.git",
    lambda: (
        f"2026-11-29T08:{_rng.randint(10, 59)}:00Z INFO worker-{_rng.randint(1, 9)} doc={_rng.randint(1, 999):03d} status=done id={_hex(16)}"
    ),
    lambda: f"/tmp/pytest-of-root/pytest-{_rng.randint(1, 999)}/test_{_word()}0/{_hex(8)}.json",
    lambda: f'  File "/srv/app/{_word()}.py", line {_rng.randint(1, 900)}, in {_word()}',
    lambda: f"ssh-ed25519 {_b64(51)} user@host",
    lambda: f"fingerprint: SHA256:{_b64(32).rstrip('=')}",
    lambda: f"objectId: {_hex(24)}",
    lambda: f"{_word()}-{_hex(6)}.log rotated ({_rng.randint(1, 999)} MB)",
    lambda: f'  "token_type": "bearer", "expires_in": {_rng.randint(60, 86400)},',
    lambda: f"password_reset_token_ttl: {_rng.randint(60, 86400)}",
    lambda: 'secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>',
    lambda: "export GITHUB_TOKEN=$(gh auth token)",
    lambda: '  password: "{{ vault_db_password }}"',
    lambda: "    SECRET_KEY = get_random_secret_key()",
    lambda: '  "password": "********",',
    lambda: "passwd:         files systemd",
    lambda: f"DATABASE_URL=postgres://localhost:5432/{_word()}",
    lambda: f"ssh://git@github.com:22/org/{_word()}.git",
    lambda: (
        f"Completed {_rng.randint(100, 9000)} tokens in {_rng.randint(1, 9)}.{_rng.randint(0, 9)}s"
    ),
    lambda: f"def test_{_word()}_token_expired_returns_401(client, api_key_fixture):",
    lambda: f"  color: #{_hex(6)}; background: url(data:image/svg+xml;base64,{_b64(30)})",
    lambda: f"key: {_word()}-{_rng.choice(['east', 'west'])}-{_rng.randint(1, 3)}",
    lambda: f'cache_key = f"{_word()}:{{user_id}}:{_hex(8)}"',
    # near misses of the rules added for issue 12 item 7
    lambda: (
        f"docker run --rm -u {_rng.randint(0, 2000)}:{_rng.randint(0, 2000)} -v $PWD:/src {_word()}"
    ),
    lambda: f"mkdir -p build/{_word()} && patch -p1 < fix-{_hex(6)}.patch",
    lambda: f"git log -p --stat {_hex(7)}..HEAD",
    lambda: f"ssh -p {_rng.randint(1024, 65000)} deploy@{_word()}.example.com",
    lambda: 'curl -u "$API_USER:$API_TOKEN" https://api.example.com/v1/status',
    lambda: f"pip install --user {_word()}=={_rng.randint(1, 9)}.{_rng.randint(0, 20)}",
    lambda: f"echo $PW | docker login -u bob --password-stdin registry-{_rng.randint(1, 9)}.io",
    lambda: f"--token-file /run/secrets/{_word()}_token --password-file ~/.config/{_word()}",
    lambda: (
        f"SORT_KEY=created_at PRIMARY_KEY=id PASSTHROUGH=enabled BYPASS_CACHE={_rng.choice(['true', 'false'])}"
    ),
    lambda: f"export SECRET_NAME=prod/{_word()} TOKEN_URL=https://auth.example.com/oauth/token",
    lambda: (
        f"PASSWORD_MIN_LENGTH={_rng.randint(8, 20)} TOKEN_TTL={_rng.randint(60, 9999)} KEY_FILE=/etc/ssl/{_word()}.pem"
    ),
    lambda: f"AUTHOR=alice{_rng.randint(1, 99)} AUTH_MODE=oauth2 KEYBOARD=us",
    lambda: (
        f"https://bucket.s3.amazonaws.com/{_word()}.tgz?X-Amz-Expires={_rng.randint(60, 900)}&X-Amz-SignedHeaders=host"
    ),
    lambda: f"https://alice@{_word()}.example.com/org/repo.git",
    lambda: f"Set-Cookie header has no SameSite attribute on /{_word()}",
    lambda: "error: cookie: none set",
    lambda: f"machine learning pipeline password reset flow for {_word()}",
    lambda: (
        f"2026-11-29 08:{_rng.randint(10, 59)}:00:{_rng.randint(100, 999)} INFO {_word()} ready"
    ),
    lambda: f"MAC 00:1a:2b:{_rng.randint(10, 99)}:4d:5e link up",
    lambda: f"error: password: incorrect for user {_word()}",
    lambda: f"redis-cli -h cache -p {_rng.randint(6000, 7000)} ping",
]


def ordinary_corpus(per_template: int = 25) -> list[str]:
    return [make() for make in ORDINARY_TEMPLATES for _ in range(per_template)]


def test_false_positive_rate_on_ordinary_lines_is_low() -> None:
    lines = ordinary_corpus()
    changed = [(line, out) for line in lines if (out := redact(line)) != line]
    rate = len(changed) / len(lines)
    print(
        f"false positives: {len(changed)} of {len(lines)} ordinary lines ({rate:.2%}); seed {SEED}"
    )
    for line, out in changed[:10]:
        print(f"  {line!r} -> {out!r}", file=sys.stderr)
    assert rate <= 0.01, f"seed {SEED}: {changed[:10]}"


@pytest.mark.parametrize("make", ORDINARY_TEMPLATES[:12])
def test_ordinary_error_lines_pass_the_log_reader_unchanged(make: Callable[[], str]) -> None:
    """The log reader (which redacts) keeps such a line as it was."""
    from resume_kit.facts.logs import error_lines

    line = "error: " + make()
    assert error_lines(line) == [line.strip()]
