"""Benchmark workspaces: real git repositories with a progress file, logs and an agent session.

``build(spec, base)`` creates, under ``base`` (a temporary folder, never the repository):

* ``repo/``: a git work tree with ``spec.tracked`` tracked files in ``src/`` and ``out/``
  (the done units' artifacts, committed in batches so evidence points at several commits),
  ``spec.changed`` modified files (half of them staged), ``spec.untracked`` new files, a
  ``.resume-kit/progress.yaml`` with ``spec.units`` units (``spec.done`` done with real
  fingerprints, one in progress with a last failure, the rest to do), a log of ``spec.log_mb``
  MB under ``logs/`` (ignored by git, read by the default ``logs/**/*.log`` glob) and a pytest
  last-failed cache;
* ``home/``: HOME, XDG folders, ``CODEX_HOME`` and ``CLAUDE_CONFIG_DIR``, which holds a Claude
  Code session of ``spec.session_mb`` MB for the work tree, built from repeated blocks of
  realistic records (user text, assistant text with tool calls, tool results, usage) and ending
  in a todo list, a tool error and the last request.

Big files are written as one block repeated, so a 300 MB log costs a second, not minutes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from resume_kit.model.progress import SCHEMA_VERSION as PROGRESS_SCHEMA

MB = 1_000_000
FILES_PER_FOLDER = 200
ARTIFACT_COMMITS = 10  # done units' artifacts arrive in this many commits (evidence varies)
UNITS_WITH_CHANGED_FILES = 3  # done units whose owned file is modified: DONE_BUT_CHANGED


@dataclass(frozen=True)
class Spec:
    name: str
    tracked: int
    changed: int
    untracked: int
    units: int
    done: int
    log_mb: int
    session_mb: int


SPECS = {
    "small": Spec("small", 100, 10, 5, 10, 6, 1, 1),
    "large": Spec("large", 20_000, 2_000, 500, 2_000, 1_500, 20, 20),
    "huge": Spec("huge", 100_000, 5_000, 1_000, 10_000, 7_500, 300, 200),
}


@dataclass
class Workspace:
    spec: Spec
    base: Path
    root: Path
    env: dict[str, str]
    session: Path
    session_blocks: int  # how many times the session's repeated block is written
    session_block_text: list[str]  # the text content of one block (for token counting)
    session_tail_text: list[str]
    next_unit: str
    next_verify: str
    build_s: float = 0.0
    notes: list[str] = field(default_factory=list)


def child_env(base: Path) -> dict[str, str]:
    """The environment every timed process gets: an isolated home, no system git config."""
    home = base / "home"
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("GIT_") or name.startswith("RESUME_KIT_"):
            env.pop(name)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        CODEX_HOME=str(home / ".codex"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
        NO_COLOR="1",
        # the checkout under test, even when another copy of resume-kit is installed
        PYTHONPATH=os.pathsep.join(
            p
            for p in (str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH"))
            if p
        ),
        # verify commands written straight into progress.yaml are not approved by `add`
        RESUME_KIT_TRUST="all",
    )
    return env


def git(root: Path, env: dict[str, str], *args: str, stdin: bytes | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=root, env=env, input=stdin, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])} failed: {proc.stderr.decode()[:500]}")
    return proc.stdout.decode()


def src_path(n: int) -> str:
    folder, index = divmod(n, FILES_PER_FOLDER)
    return f"src/pkg{folder:04d}/mod{index:03d}.py"


def unit_id(n: int) -> str:
    return f"doc-{n:05d}"


def artifact_path(n: int) -> str:
    return f"out/{n:05d}.json"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _write_repeated(path: Path, block: str, repeats: int, tail: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = block.encode("utf-8")
    chunk = data * max(1, (8 * MB) // max(1, len(data)))
    per_chunk = len(chunk) // len(data)
    with open(path, "wb") as handle:
        left = repeats
        while left >= per_chunk:
            handle.write(chunk)
            left -= per_chunk
        handle.write(data * left)
        handle.write(tail.encode("utf-8"))


# --------------------------------------------------------------------------- the tree


CHECK_PY = """\
import json, sys
with open(sys.argv[1]) as handle:
    record = json.load(handle)
missing = [k for k in ("party_a", "party_b", "date", "amount") if k not in record]
if missing:
    sys.exit(f"KeyError: {missing[0]!r}")
print("ok", sys.argv[1])
"""


def _module_text(n: int) -> str:
    return f'"""Module {n}."""\n\nVALUE = {n}\n\n\ndef value() -> int:\n    return VALUE\n'


def _artifact_text(n: int) -> str:
    record = {"party_a": f"A{n}", "party_b": f"B{n}", "date": "2026-11-29", "amount": n}
    return json.dumps(record) + "\n"


def _write_tree(root: Path, spec: Spec) -> int:
    sources = spec.tracked - spec.done - 4  # .gitignore, check.py, README.md, progress.yaml
    for n in range(sources):
        _write(root / src_path(n), _module_text(n))
    _write(root / ".gitignore", "logs/\n.pytest_cache/\n__pycache__/\n")
    _write(root / "check.py", CHECK_PY)
    _write(root / "README.md", f"# bench workspace {spec.name}\n")
    return sources


def _changed_indices(spec: Spec, sources: int) -> list[int]:
    """Modified source files: none owned by a unit except a few done units' (DONE_BUT_CHANGED)."""
    owned = spec.units
    free = range(owned, sources)
    step = max(1, len(free) // max(1, spec.changed - UNITS_WITH_CHANGED_FILES))
    picked = list(free[::step])[: spec.changed - UNITS_WITH_CHANGED_FILES]
    return [0, 1, 2][:UNITS_WITH_CHANGED_FILES] + picked


# --------------------------------------------------------------------------- progress.yaml


def _progress_yaml(
    spec: Spec, evidence: dict[int, tuple[str, str]], verified_at: str
) -> tuple[str, str, str]:
    """(text, next unit id, its verify command)."""
    lines = [
        f"schema_version: {PROGRESS_SCHEMA}",
        f"goal: Extract parties, dates and amounts from the {spec.units} contracts into out/",
        "# written by bench/workspaces.py",
        "units:",
    ]
    in_progress = spec.done
    for n in range(spec.units):
        status = "done" if n < spec.done else "in_progress" if n == in_progress else "todo"
        lines += [
            f"  - id: {unit_id(n)}",
            f"    title: Extract contract {n:05d}",
            f"    status: {status}",
            f"    verify: grep -q party_b {artifact_path(n)}",
            f"    files: [{src_path(n)}]",
            f"    artifacts: [{artifact_path(n)}]",
        ]
        if n in evidence:
            commit, fingerprint = evidence[n]
            lines += [
                "    evidence:",
                f"      verified_at: '{verified_at}'",
                f"      commit: {commit}",
                "      dirty: false",
                f"      fingerprint: '{fingerprint}'",
                "      duration_s: 0.21",
                f"      log: .resume-kit/runs/{unit_id(n)}-20261129T080000Z.log",
            ]
        if n == in_progress:
            lines += [
                "    last_failure:",
                f"      at: '{verified_at}'",
                "      exit_code: 1",
                "      signature: 9c1e0b7d2f4a",
                "      repeats: 1",
                "      excerpt: \"KeyError: 'party_b' (src/extract.py:88)\"",
            ]
    lines += [
        "actions:",
        "  - key: notify-reviewer-pr-42",
        "    description: Asked the reviewer for a review on PR 42",
        "    status: unknown",
        f"    at: '{verified_at}'",
        "notes: Amounts are in euros; dates are ISO 8601.",
    ]
    return (
        "\n".join(lines) + "\n",
        unit_id(in_progress),
        f"grep -q party_b {artifact_path(in_progress)}",
    )


# --------------------------------------------------------------------------- log and session


def _log_block() -> str:
    lines = []
    for n in range(40):
        lines.append(
            f"2026-11-29 08:{n % 60:02d}:00 INFO processed contract {n:05d} in 0.2{n % 10} s"
        )
    lines.append("2026-11-29 08:41:00 WARNING slow page in contract 00041 (3.2 s)")
    return "\n".join(lines) + "\n"


LOG_TAIL = """\
2026-11-29 09:00:00 INFO processing contract 01501
Traceback (most recent call last):
  File "src/extract.py", line 88, in extract
    party_b = fields["party_b"]
KeyError: 'party_b'
2026-11-29 09:00:01 ERROR contract 01501 failed: KeyError 'party_b'
"""


def record(
    kind: str, cwd: str, session_id: str, message: dict[str, object], **extra: object
) -> str:
    record: dict[str, object] = {
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "parentUuid": None,
        "sessionId": session_id,
        "timestamp": "2026-11-29T08:00:00.000Z",
        "cwd": cwd,
        "gitBranch": "main",
        "version": "2.0.0",
        "message": message,
        **extra,
    }
    return json.dumps(record)


def _session_block(cwd: str, session_id: str, n: int) -> tuple[str, list[str]]:
    """One exchange: a request, an answer with a Read and an Edit, their results, a test run."""
    texts: list[str] = []
    records: list[str] = []
    request = f"Continue with the next contract. Make sure amounts keep their currency (batch {n})."
    texts.append(request)
    records.append(record("user", cwd, session_id, {"role": "user", "content": request}))
    source = "\n".join(
        f"    {i:3d}  def field_{i}(text):  # parse the labelled field number {i}\n"
        for i in range(40)
    )
    answer = "I'll read the extractor first, then fix the field parsing for this contract."
    read_input = {"file_path": f"{cwd}/src/extract.py"}
    edit_input = {
        "file_path": f"{cwd}/src/extract.py",
        "old_string": 'party_b = fields["party_b"]',
        "new_string": 'party_b = fields.get("party_b") or fields.get("second party")',
    }
    texts += [answer, json.dumps(read_input), json.dumps(edit_input)]
    usage = {"input_tokens": 1200, "cache_read_input_tokens": 45000, "output_tokens": 350}
    records.append(
        record(
            "assistant",
            cwd,
            session_id,
            {
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "text", "text": answer},
                    {"type": "tool_use", "id": f"toolu_r{n}", "name": "Read", "input": read_input},
                    {"type": "tool_use", "id": f"toolu_e{n}", "name": "Edit", "input": edit_input},
                ],
                "usage": usage,
            },
        )
    )
    test_output = "".join(
        f"tests/test_extract.py::test_contract_{i:03d} PASSED\n" for i in range(60)
    )
    texts += [source, "The file has been updated.", test_output]
    records.append(
        record(
            "user",
            cwd,
            session_id,
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_r{n}", "content": source},
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_e{n}",
                        "content": "The file has been updated.",
                    },
                ],
            },
        )
    )
    bash_input = {
        "command": "python -m pytest tests/test_extract.py -q",
        "description": "Run tests",
    }
    texts.append(json.dumps(bash_input))
    records.append(
        record(
            "assistant",
            cwd,
            session_id,
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"toolu_b{n}", "name": "Bash", "input": bash_input}
                ],
                "usage": usage,
            },
        )
    )
    records.append(
        record(
            "user",
            cwd,
            session_id,
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_b{n}", "content": test_output}
                ],
            },
        )
    )
    return "\n".join(records) + "\n", texts


def _session_tail(cwd: str, session_id: str, spec: Spec) -> tuple[str, list[str]]:
    todos = [
        {"content": f"Extract contract {n:05d}", "status": "completed", "activeForm": "Extracting"}
        for n in range(max(0, spec.done - 3), spec.done)
    ] + [
        {
            "content": f"Extract contract {spec.done:05d}",
            "status": "in_progress",
            "activeForm": "Extracting",
        },
        {"content": "Write the summary report", "status": "pending", "activeForm": "Writing"},
    ]
    todo_input = {"todos": todos}
    error = "Exit code 1\nKeyError: 'party_b'"
    request = "Keep going with the remaining contracts; stop if the same error repeats."
    records = [
        record("user", cwd, session_id, {"role": "user", "content": request}),
        record(
            "assistant",
            cwd,
            session_id,
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_todo",
                        "name": "TodoWrite",
                        "input": todo_input,
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_last",
                        "name": "Bash",
                        "input": {"command": f"python check.py {artifact_path(spec.done)}"},
                    },
                ],
                "usage": {
                    "input_tokens": 1500,
                    "cache_read_input_tokens": 150000,
                    "output_tokens": 90,
                },
            },
        ),
        record(
            "user",
            cwd,
            session_id,
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_todo",
                        "content": "Todos updated",
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_last",
                        "content": error,
                        "is_error": True,
                    },
                ],
            },
        ),
    ]
    return "\n".join(records) + "\n", [request, json.dumps(todo_input), error]


def claude_project_dir(claude_dir: Path, root: Path) -> Path:
    """Where Claude Code keeps the sessions of a work tree (every non-alphanumeric becomes -)."""
    return claude_dir / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(root))


# --------------------------------------------------------------------------- building


def build(spec: Spec, base: Path, log: object = None) -> Workspace:
    from resume_kit.facts.fingerprint import fingerprint

    started = time.perf_counter()
    base.mkdir(parents=True, exist_ok=True)
    root = (base / "repo").resolve()
    root.mkdir()
    env = child_env(base)
    for folder in ("home/.local/share", "home/.config", "home/.cache", "home/.codex"):
        (base / folder).mkdir(parents=True, exist_ok=True)

    git(root, env, "init", "-q", "-b", "main")
    for key, value in (
        ("commit.gpgsign", "false"),
        ("gc.auto", "0"),
        ("core.untrackedCache", "false"),
    ):
        git(root, env, "config", key, value)
    sources = _write_tree(root, spec)
    git(root, env, "add", "-A")
    git(root, env, "commit", "-q", "-m", f"{sources} source files")

    # The done units' artifacts arrive in batches; each unit's evidence names its batch commit.
    commits: dict[int, str] = {}
    batches = min(ARTIFACT_COMMITS, max(1, spec.done))
    per_batch = -(-spec.done // batches)
    for first in range(0, spec.done, per_batch):
        batch = range(first, min(spec.done, first + per_batch))
        for n in batch:
            _write(root / artifact_path(n), _artifact_text(n))
        git(root, env, "add", "--", "out")
        git(root, env, "commit", "-q", "-m", f"contracts {first}-{batch[-1]}")
        head = git(root, env, "rev-parse", "HEAD").strip()
        commits.update(dict.fromkeys(batch, head))
    evidence = {
        n: (commits[n], fingerprint(root, [src_path(n)], [artifact_path(n)]))
        for n in range(spec.done)
    }
    text, next_unit, next_verify = _progress_yaml(spec, evidence, "2026-11-29T08:00:00Z")
    _write(root / ".resume-kit" / "progress.yaml", text)
    _write(root / ".resume-kit" / ".gitignore", "snapshots/\nruns/\nhistory/\n*.lock\ncache/\n")
    git(root, env, "add", "--", ".resume-kit")
    git(root, env, "commit", "-q", "-m", "progress")

    # Uncommitted work: modified files (half staged) and new files.
    changed = _changed_indices(spec, sources)
    for n in changed:
        with open(root / src_path(n), "a", encoding="utf-8") as handle:
            handle.write(f"\nCHANGED = {n}\n")
    staged = "\0".join(src_path(n) for n in changed[::2]) + "\0"
    git(root, env, "add", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=staged.encode())
    for n in range(spec.untracked):
        package = (n * 7) % max(1, sources // FILES_PER_FOLDER)
        _write(root / f"src/pkg{package:04d}/new_{n:05d}.py", f"NEW = {n}\n")

    # A long log whose tail holds the failure, and pytest's last-failed cache.
    block = _log_block()
    _write_repeated(root / "logs" / "run.log", block, (spec.log_mb * MB) // len(block), LOG_TAIL)
    lastfailed = {f"tests/test_extract.py::test_contract_{spec.done:05d}": True}
    _write(root / ".pytest_cache" / "v" / "cache" / "lastfailed", json.dumps(lastfailed))

    # The agent session this brief replaces.
    session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, str(root)))
    session = claude_project_dir(base / "home" / ".claude", root) / f"{session_id}.jsonl"
    block_text, block_texts = _session_block(str(root), session_id, 0)
    tail, tail_texts = _session_tail(str(root), session_id, spec)
    repeats = max(1, (spec.session_mb * MB) // len(block_text))
    _write_repeated(session, block_text, repeats, tail)

    # Settle the index (racy timestamps) so the first timed status is not a refresh.
    git(root, env, "update-index", "-q", "--refresh")
    git(root, env, "status", "--porcelain=v2", "-z")
    return Workspace(
        spec=spec,
        base=base,
        root=root,
        env=env,
        session=session,
        session_blocks=repeats,
        session_block_text=block_texts,
        session_tail_text=tail_texts,
        next_unit=next_unit,
        next_verify=next_verify,
        build_s=time.perf_counter() - started,
    )


def wait_for_snapshot(
    repo: Path, head: str, deadline_s: float = 30.0, poll_s: float = 0.02
) -> bool:
    """Whether the newest snapshot in ``repo`` records ``head`` within ``deadline_s`` (the
    post-commit hook writes it in the background after ``git commit`` has returned)."""
    folder = repo / ".resume-kit" / "snapshots"
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        newest = sorted(folder.glob("*.json")) if folder.is_dir() else []
        if newest:
            try:
                if json.loads(newest[-1].read_text())["repo"]["head"] == head:
                    return True
            except (ValueError, KeyError, OSError):
                pass
        time.sleep(poll_s)
    return False
