"""Issue 12, redaction workstream: multi-line secrets, missed secrets, control characters in
printed fields, ``plan`` placeholder quoting and input limits (docs/security.md).

Every attack is built for real: an attacker's source repository, a ``git clone`` of it, then
the victim's ordinary commands through the installed console script.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hostile import hostile_clone, run_user

TRUST_ALL = {"RESUME_KIT_TRUST": "all"}


def ok(clone: Path, *args: str, codes: tuple[int, ...] = (0,), **kw: object) -> str:
    result = run_user(*args, cwd=clone, **kw)  # type: ignore[arg-type]
    assert result.code in codes, f"{args}: exit {result.code}: {result.stderr[-2000:]}"
    return result.stdout + "\n" + result.stderr


# --------------------------------------------------------------------------- item 6

_BODY = [
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "QyNTUxOQAAACBODYONEBODYONEBODYONEBODYONEBODYONEBODYONEBODYONEAAAAJhQQQ",
    "ZZZZBODYTWOxBODYTWOxBODYTWOxBODYTWOxBODYTWOxBODYTWOxBODYTWOxAAAAAAAAAA",
    "MIIEBODYTHREEBODYTHREEBODYTHREEBODYTHREE",
]


def _key_script(kind: str, end: bool) -> str:
    lines = [f"-----BEGIN {kind}PRIVATE KEY-----", *_BODY]
    if end:
        lines.append(f"-----END {kind}PRIVATE KEY-----")
    # no "error" marker: the excerpt falls back to the last lines of the output
    return (
        "#!/bin/sh\necho 'loading the deploy key'\ncat <<'EOF'\n"
        + "\n".join(lines)
        + "\nEOF\nexit 1\n"
    )


@pytest.mark.parametrize(
    ("kind", "end"), [("OPENSSH ", True), ("RSA ", True), ("", False), ("ENCRYPTED ", False)]
)
def test_a_private_key_printed_by_a_failing_verify_command_never_reaches_any_output(
    tmp_path: Path, kind: str, end: bool
) -> None:
    clone = hostile_clone(tmp_path, {"check.sh": _key_script(kind, end)}, executable=("check.sh",))
    ok(clone, "init", "--goal", "deploy")
    ok(clone, "add", "Deploy", "--id", "deploy", "--verify", "sh check.sh")
    outputs = {
        "run --json": ok(clone, "run", "--json", codes=(1,), env=TRUST_ALL),
        "progress.yaml": (clone / ".resume-kit" / "progress.yaml").read_text(),
        "status --json": ok(clone, "status", "--json", env=TRUST_ALL),
        "status": ok(clone, "status", env=TRUST_ALL),
        "brief": ok(clone, "brief", env=TRUST_ALL),
        "brief --format json": ok(clone, "brief", "--format", "json", env=TRUST_ALL),
        "verify-next --json": ok(clone, "verify-next", "--json", codes=(1,), env=TRUST_ALL),
    }
    ok(clone, "start", "deploy", env=TRUST_ALL)
    outputs["Stop hook"] = ok(
        clone, "stop-check", input=json.dumps({"cwd": str(clone)}), env=TRUST_ALL
    )
    assert '"decision": "block"' in outputs["Stop hook"], outputs["Stop hook"]
    assert "[REDACTED:private-key]" in outputs["progress.yaml"]
    leaked = {
        name: [line[:12] for line in _BODY if line[4:20] in text]
        for name, text in outputs.items()
        if any(line[4:20] in text for line in _BODY)
    }
    assert leaked == {}


@pytest.mark.parametrize("cut", [0, 1, 2, 3])
def test_a_key_block_whose_begin_was_cut_off_is_still_redacted_line_by_line_and_whole(
    cut: int,
) -> None:
    """A log or output tail can start inside a key: the END line marks the body before it."""
    from resume_kit.infra.redact import redact, redact_lines, split_lines

    text = "\n".join(["build ok", *_BODY[cut:], "-----END OPENSSH PRIVATE KEY-----", "done"])
    for out in (
        redact(text),
        "\n".join(split_lines(text)),
        "\n".join(redact_lines(text.split("\n"))),
    ):
        assert not any(line[4:20] in out for line in _BODY), out
        assert out.startswith("build ok\n") and out.endswith("done"), out
    assert len(redact_lines(text.split("\n"))) == len(text.split("\n"))


def test_a_putty_key_file_is_one_block() -> None:
    from resume_kit.infra.redact import redact

    text = (
        "before\nPuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\n"
        "Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIPUBLIC\nPUBLICPUBLIC\nPrivate-Lines: 2\n"
        "AAAAIPRIVATEPRIVATEPRIVATE1\nPRIVATEPRIVATE2\nPrivate-MAC: 0123456789abcdef\nafter"
    )
    out = redact(text)
    assert out == "before\n[REDACTED:private-key]\nafter"


# --------------------------------------------------------------------------- item 7

_PW = "Xq7vR2mPz9LkW4tN"  # a fake credential; no 8 characters of it may survive
_SIG = "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"
REALISTIC = [
    f"mysql -uroot -p{_PW} -h db",
    f"mysqldump --single-transaction -u app -p{_PW} shop > dump.sql",
    f"mysql --password {_PW} -h db",
    f"mysql --password={_PW}",
    f"curl -u alice:{_PW} https://api.example.com",
    f"curl --user alice:{_PW} https://x.example.com",
    f"PGPASSWORD={_PW} psql -h db",
    "https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260101T"
    f"000000Z&X-Amz-Expires=900&X-Amz-Signature={_PW}{_SIG}",
    f"https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature={_PW}",
    f"https://{_PW}@github.com/org/r.git",
    f"git clone https://x-access-token:{_PW}@github.com/org/r.git",
    f"//registry.npmjs.org/:_authToken={_PW}",
    f"_auth={_PW}==",
    f"//npm.pkg.github.com/:_password={_PW}",
    f"Cookie: session={_PW}; theme=dark",
    f"Set-Cookie: sid={_PW}; Path=/; HttpOnly",
    f"machine api.example.com login alice password {_PW}",
    f"db.example.com:5432:app:alice:{_PW}",
    f"*:*:*:postgres:{_PW}",
    "password: correcthorsebatterystaple" + _PW[:0],
    f"APITOKEN={_PW}",
    f"dbpassword={_PW}",
    f"SMTPPASS={_PW}",
    f"ENCRYPTION_KEY={_PW}",
    f"export MYSECRET={_PW}",
    f"sshpass -p {_PW} ssh host",
    f"docker login -u bob -p {_PW} registry.example.com",
    f"gh auth login --token {_PW}",
    f"--api-key {_PW}",
    f"X-Api-Key: {_PW}",
    f"private_token={_PW}",
    f"DATABASE_URL=postgres://u:{_PW}@db/app",
    f"redis://:{_PW}@cache:6379/0",
    f"Authorization: Basic {_PW}",
    f"SIGNINGSECRET={_PW}",
]


@pytest.mark.parametrize("line", REALISTIC)
def test_realistic_credential_lines_are_redacted(line: str) -> None:
    from resume_kit.infra.redact import redact

    out = redact(line)
    secret = "correcthorse" if "correcthorse" in line else _PW[:8]
    assert secret not in out and _SIG[:16] not in out, out
    assert "[REDACTED:" in out


def test_branch_names_and_commit_trailers_are_redacted_in_json_output_and_stored_snapshots(
    tmp_path: Path,
) -> None:
    token = "ghp_" + "Zx9" * 12
    clone = hostile_clone(
        tmp_path,
        {"README.md": "hi\n"},
        message=f"ship it\n\nResume-Unit: deploy-{token}\nToken: {token}\n",
        branch=f"feature/token={_PW}",
    )
    ok(clone, "init", "--goal", "g")
    outputs = {
        "snapshot --json": ok(clone, "snapshot", "--json"),
        "status --json": ok(clone, "status", "--json"),
        "brief --format json": ok(clone, "brief", "--format", "json"),
        "brief": ok(clone, "brief"),
    }
    for path in sorted((clone / ".resume-kit" / "snapshots").glob("*.json")):
        outputs[f"stored {path.name}"] = path.read_text()
    assert any(name.startswith("stored ") for name in outputs)
    leaked = [name for name, text in outputs.items() if _PW[:8] in text or token[4:16] in text]
    assert leaked == []
    assert "feature/token=[REDACTED:token]" in outputs["snapshot --json"]


# --------------------------------------------------------------------------- item 2

README_VERIFY = "python extract.py {path} && test -s out/{stem}.json"
HOSTILE_NAMES = [
    "x{name};touch PWNED;y.pdf",
    "$(touch PWNED).pdf",
    "`touch PWNED3`.pdf",
    "a'b\"c.pdf",
    "-rf.pdf",
    "sp ace&&touch PWNED.pdf",
    "new\nline;touch PWNED.pdf",
    "{path}{stem}{}.pdf",
]
EXTRACT = (
    "import json, pathlib, sys\n"
    "src = pathlib.Path(sys.argv[1])\n"
    "assert len(sys.argv) == 2 and src.is_file(), sys.argv\n"
    "pathlib.Path('out').mkdir(exist_ok=True)\n"
    "(pathlib.Path('out') / (src.stem + '.json')).write_text(json.dumps(str(src)))\n"
)


def test_plan_with_the_readme_template_never_runs_a_file_name(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"docs/{name}": "%PDF\n" for name in HOSTILE_NAMES}
    clone = hostile_clone(tmp_path, {"extract.py": EXTRACT, **files})
    ok(clone, "init", "--goal", "extract")
    ok(
        clone,
        "plan",
        "--each",
        "docs/*.pdf",
        "--title",
        "Extract {name}",
        "--verify",
        README_VERIFY,
        "--artifact",
        "out/{stem}.json",
    )
    out = ok(clone, "run", "--keep-going")
    assert not list(clone.rglob("PWNED*")), out
    data = json.loads(ok(clone, "status", "--json").split("\n\n")[0] or "{}")
    units = data["units"]
    assert len(units) == len(HOSTILE_NAMES)
    assert all(u["status"] == "done" for u in units), units
    # every unit's command keeps its file name as exactly one argument
    for unit in units:
        words = shlex.split(unit["verify"])
        assert words[:2] == ["python", "extract.py"] and words[3] == "&&", words
        assert words[2].removeprefix("./").removeprefix("docs/") in HOSTILE_NAMES
        assert unit["title"].removeprefix("Extract ") in HOSTILE_NAMES


def test_plan_refuses_a_placeholder_inside_quotes(tmp_path: Path) -> None:
    clone = hostile_clone(tmp_path, {"docs/$(touch PWNED).pdf": "x"})
    ok(clone, "init", "--goal", "extract")
    for verify in ('python extract.py "{path}"', "cat '{path}'"):
        result = run_user(
            "plan", "--each", "docs/*.pdf", "--title", "t {n}", "--verify", verify, cwd=clone
        )
        assert result.code == 2, result
        assert result.stderr.count("\n") <= 2 and "resume-kit: error:" in result.stderr
        assert "inside quotes" in result.stderr
    assert not list(clone.rglob("PWNED*"))


_HOSTILE_CHARS = st.sampled_from([*"{}$();`'\"\n\t -\\&|<>*?!~#=.ab", "{name}", "{path}", "\udcff"])
_NAMES = st.lists(_HOSTILE_CHARS | st.characters(blacklist_characters="/\x00"), min_size=1).map(
    "".join
)


@settings(max_examples=300, deadline=None)
@given(name=_NAMES)
def test_every_placeholder_value_is_exactly_one_shell_word(name: str) -> None:
    from pathlib import PurePosixPath

    from resume_kit.core.placeholders import expand as _expand
    from resume_kit.core.placeholders import expand_command as _expand_command

    path = f"docs/{name}"
    pure = PurePosixPath(path)
    values = {"path": path, "stem": pure.stem, "name": pure.name, "n": "7"}
    words = shlex.split(_expand_command(README_VERIFY, values))
    assert words == ["python", "extract.py", path, "&&", "test", "-s", f"out/{pure.stem}.json"]
    words = shlex.split(_expand_command("tool {name} --n={n} {stem}", values))
    expected_name = "./" + pure.name if pure.name.startswith("-") else pure.name
    expected_stem = "./" + pure.stem if pure.stem.startswith("-") else pure.stem
    assert words == ["tool", expected_name, "--n=7", expected_stem]
    # no re-expansion: a value holding a placeholder stays as it is
    assert _expand("Extract {name}", values) == f"Extract {pure.name}"


def test_plan_skips_a_file_name_that_is_not_utf8_instead_of_crashing(tmp_path: Path) -> None:
    clone = hostile_clone(tmp_path, {"docs/\udcff;touch PWNED.pdf": "x", "docs/ok.pdf": "x"})
    ok(clone, "init", "--goal", "extract")
    out = ok(clone, "plan", "--each", "docs/*.pdf", "--title", "E {name}", "--verify", "cat {path}")
    assert "not valid UTF-8" in out and "planned 1 new unit" in out
    ok(clone, "run")
    assert not list(clone.rglob("PWNED*"))


# --------------------------------------------------------------------------- item 10

HOSTILE_TEXT = "A\\u202eevil\\x1b[2J\\u200bX\\x9b31m\\u2066\\r\\x7f\\ufeffZ"
_BAD = [
    *(chr(c) for c in range(0x20)),
    *(chr(c) for c in range(0x7F, 0xA0)),
    *"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
    *"\u200b\u200c\u200d\u2060\ufeff",
]


def _hostile_progress() -> str:
    return f"""schema_version: 1
goal: "goal {HOSTILE_TEXT}"
units:
  - id: first
    title: "first {HOSTILE_TEXT}"
    status: done
    verify: "true"
    evidence:
      verified_at: "2026-11-30T10:00:00Z"
      commit: "0123456789abcdef0123456789abcdef01234567"
      dirty: false
    last_failure:
      at: "2026-11-30T09:00:00Z"
      exit_code: 1
      signature: "{"0" * 64}"
      repeats: 2
      excerpt: "boom {HOSTILE_TEXT}"
  - id: second
    title: "second {HOSTILE_TEXT}"
    status: todo
    verify: "echo {HOSTILE_TEXT}"
  - id: third
    title: "third {HOSTILE_TEXT}"
    status: todo
    verify: "true"
actions:
  - key: "deploy-{HOSTILE_TEXT}"
    description: "pushed {HOSTILE_TEXT}"
    status: success
    at: "2026-11-30T10:00:00Z"
"""


def test_printed_fields_escape_control_bidi_and_zero_width_characters(tmp_path: Path) -> None:
    clone = hostile_clone(tmp_path, {".resume-kit/progress.yaml": _hostile_progress()})
    outputs = {
        "status": ok(clone, "status"),
        "action list": ok(clone, "action", "list"),
        "trust --show": ok(clone, "trust", "--show", codes=(0, 1, 4)),
        "verify-next --dry-run": ok(clone, "verify-next", "--dry-run", env=TRUST_ALL),
    }
    ok(clone, "block", "second", "--reason", "skip it")
    outputs["verify-next"] = ok(clone, "verify-next", "--unit", "third", env=TRUST_ALL)
    assert "next:" in outputs["verify-next"] or "all " in outputs["verify-next"]
    for name, text in outputs.items():
        assert "\\u202e" in text or name == "verify-next", (name, text)
        found = sorted({f"U+{ord(c):04X}" for c in text if c in _BAD and c != "\n"})
        assert found == [], (name, found, text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(_BAD) | st.characters(), max_size=80))
def test_the_escape_leaves_no_unsafe_character_and_one_line(text: str) -> None:
    from resume_kit.core.escape import escape_controls

    shown = escape_controls(text)
    assert not any(c in _BAD or c in "\u2028\u2029" for c in shown)
    assert len(shown.splitlines()) <= 1
    kept = escape_controls(text, keep="\t")
    assert not any(c in _BAD and c != "\t" for c in kept)


# --------------------------------------------------------------------------- item 15 (input)


def _one_line_error(result: object) -> None:
    from tests.conftest import Result

    assert isinstance(result, Result)
    assert result.code == 2, result
    assert "Traceback" not in result.stderr and "resume-kit: error:" in result.stderr, result
    assert len(result.stderr.strip().splitlines()) <= 2, result.stderr


@pytest.mark.parametrize("verify", ["echo a\x00b", "echo " + "x" * (128 * 1024)])
def test_a_nul_byte_or_a_huge_verify_command_is_exit_2_at_plan_and_at_load(
    tmp_path: Path, verify: str
) -> None:
    # argv can carry neither a NUL nor one argument of 128 KiB: the way in at creation is
    # plan, whose placeholders can grow a short template past the limit
    long_name = "n" * 200 + ".txt"
    clone = hostile_clone(tmp_path, {f"docs/{long_name}": "x"})
    ok(clone, "init", "--goal", "g")
    template = "cat " + " ".join(["{path}"] * 700)
    assert len(template) < 128 * 1024 < len(template.replace("{path}", f"docs/{long_name}"))
    result = run_user(
        "plan", "--each", "docs/*.txt", "--title", "t", "--verify", template, cwd=clone
    )
    _one_line_error(result)
    assert "128 KiB" in result.stderr
    escaped = verify.replace("\x00", "\\0")
    progress = f'schema_version: 1\ngoal: g\nunits:\n  - id: bad\n    verify: "{escaped}"\n'
    clone2 = hostile_clone(tmp_path / "second", {".resume-kit/progress.yaml": progress})
    for args in (("status",), ("status", "--json"), ("verify-next",), ("brief",)):
        _one_line_error(run_user(*args, cwd=clone2, env=TRUST_ALL))
    shown = run_user("trust", "--show", cwd=clone2)  # a warning: nothing to approve
    assert shown.code == 0 and "verify " in shown.stderr and "Traceback" not in shown.stderr


@pytest.mark.parametrize("duration", [".nan", ".inf", "-.inf", ".NaN"])
def test_nan_and_infinite_durations_are_rejected_and_json_stays_valid(
    tmp_path: Path, duration: str
) -> None:
    progress = (
        "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    status: done\n    verify: 'true'\n"
        "    evidence:\n      verified_at: '2026-11-30T10:00:00Z'\n      commit: null\n"
        f"      dirty: false\n      fingerprint: 'sha256:00'\n      duration_s: {duration}\n"
    )
    clone = hostile_clone(tmp_path, {".resume-kit/progress.yaml": progress})
    result = run_user("status", "--json", cwd=clone)
    _one_line_error(result)
    assert "duration_s" in result.stderr


def test_an_id_ending_in_a_newline_is_rejected(tmp_path: Path) -> None:
    progress = 'schema_version: 1\ngoal: g\nunits:\n  - id: "a\\n"\n    verify: "true"\n'
    clone = hostile_clone(tmp_path, {".resume-kit/progress.yaml": progress})
    _one_line_error(run_user("status", cwd=clone))
    from resume_kit.model.progress import ID_PATTERN

    assert ID_PATTERN.match("a\n") is None


def test_a_shallow_clone_reports_older_evidence_as_info_not_an_error(tmp_path: Path) -> None:
    from tests.conftest import git
    from tests.hostile import make_source_repo

    source = make_source_repo(tmp_path / "source", {"a.txt": "1\n"})
    old = git(source, "rev-parse", "HEAD").stdout.strip()
    progress = (
        "schema_version: 1\ngoal: g\nunits:\n  - id: a\n    status: done\n    verify: 'true'\n"
        f"    evidence:\n      verified_at: '2026-11-30T10:00:00Z'\n      commit: {old}\n"
        "      dirty: false\n      fingerprint: ''\n      duration_s: 0.1\n"
    )
    (source / ".resume-kit").mkdir()
    (source / ".resume-kit" / "progress.yaml").write_text(progress)
    (source / "a.txt").write_text("2\n")
    git(source, "add", "-A", "-f")
    git(source, "commit", "-q", "-m", "second")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{source}", str(clone))
    assert (clone / ".git" / "shallow").is_file()
    findings = json.loads(ok(clone, "status", "--json").split("\n\n")[0])["findings"]
    codes = {f["code"]: f["severity"] for f in findings}
    assert "EVIDENCE_NOT_IN_HISTORY" not in codes, findings
    assert codes.get("EVIDENCE_NOT_IN_SHALLOW_HISTORY") == "info", findings
    message = next(f["message"] for f in findings if f["unit"] == "a")
    assert "not in this shallow history" in message
    # a full clone of the same repository finds the commit in its history
    full = tmp_path / "full"
    git(tmp_path, "clone", "-q", f"file://{source}", str(full))
    assert "EVIDENCE_NOT_IN_HISTORY" not in ok(full, "status", "--json")


def test_the_live_last_line_of_a_running_command_is_never_a_key_body_line(tmp_path: Path) -> None:
    """The heartbeat of verify-next/run shows the last output line while the command runs."""
    from resume_kit.runner.verify import OutputSink

    with (tmp_path / "log").open("wb") as handle:
        sink = OutputSink(handle)
        for chunk in [
            "loading\n-----BEGIN OPENSSH PRIVATE",
            " KEY-----\n",
            *(b + "\n" for b in _BODY),
        ]:
            sink.feed(chunk.encode())
            sink.observe(chunk.encode())
            assert not any(line[4:20] in sink.last_line for line in _BODY), sink.last_line
        sink.observe(b"-----END OPENSSH PRIVATE KEY-----\nstill working\n")
        assert sink.last_line == "still working"


def test_a_branch_name_stored_in_clear_by_an_older_snapshot_is_redacted_in_the_diff(
    tmp_path: Path,
) -> None:
    from tests.hostile import user_git

    clone = hostile_clone(tmp_path, {"README.md": "hi\n"})
    ok(clone, "init", "--goal", "g")
    ok(clone, "snapshot")
    stored = sorted((clone / ".resume-kit" / "snapshots").glob("*.json"))[-1]
    data = json.loads(stored.read_text())
    data["repo"]["branch"] = f"feature/token={_PW}"  # what a version before the fix stored
    from resume_kit.facts.snapshot_store import compute_checksum

    data["checksum"] = compute_checksum(data)
    stored.write_text(json.dumps(data))
    user_git(clone, "checkout", "-q", "-b", "other")
    out = ok(clone, "snapshot")
    assert _PW[:8] not in out and "feature/token=[REDACTED:token]" in out, out
