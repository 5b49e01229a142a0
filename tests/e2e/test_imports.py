"""The hook path, `status`, `snapshot` and `brief` import no heavy module they do not need.

Each command runs in a subprocess through a wrapper that calls the real entry point and then
writes ``sys.modules`` to a file; the test checks the list of modules, never a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from resume_kit.integrations.git_hooks import _BOOTSTRAP, package_parent
from tests.conftest import git

# Never needed by any of these paths: the summariser's SDK and its HTTP stack, typer's optional
# Pydantic coercion, GitPython (git runs as a plain child process), the round-trip YAML library
# (only a progress file that libyaml rejects needs it), plain HTTP clients, the MCP SDK (only
# `resume-kit mcp` imports it).
NEVER = {"anthropic", "httpx", "httpcore", "pydantic", "pydantic_core", "git", "gitdb", "ruamel",
         "requests", "urllib3", "mcp", "anyio", "starlette", "uvicorn"}  # fmt: skip
RENDERING = {
    "jinja2",
    "tiktoken",
    "tiktoken_ext",
    "resume_kit.brief.render",
    "resume_kit.brief.summarize",
}
READING = {
    "yaml",
    "resume_kit.model.progress",
    "resume_kit.progress_file.validate",
    "resume_kit.progress_file.roundtrip",
    "resume_kit.progress_file.io",
    "resume_kit.facts.snapshot",
    "resume_kit.facts.git",
}

CLI_WRAPPER = textwrap.dedent(
    """
    import sys
    out = sys.argv.pop(1)
    sys.argv[0] = "resume-kit"
    from resume_kit.cli.app import main
    try:
        main()
    except SystemExit:
        pass
    found = sorted(sys.modules)
    import json
    with open(out, "w") as handle:
        json.dump(found, handle)
    """
)

MODULE_WRAPPER = textwrap.dedent(
    """
    import json, runpy, sys
    out = sys.argv.pop(1)
    module = sys.argv.pop(1)
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
    with open(out, "w") as handle:
        json.dump(sorted(sys.modules), handle)
    """
)

# The hook script's own start: `python -S -c BOOTSTRAP <package dir> <hook> ARGS`, then a dump.
HOOK_WRAPPER = _BOOTSTRAP.replace(
    "sys.exit(main())",
    "code = main()\nimport json\njson.dump(sorted(sys.modules), open(OUT, 'w'))\nsys.exit(code)",
)

SESSION_RECORD = {
    "type": "assistant",
    "uuid": "u1",
    "sessionId": "s1",
    "timestamp": "2026-11-29T08:00:00Z",
    "message": {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "t1",
                "name": "TodoWrite",
                "input": {"todos": [{"content": "Alpha", "status": "in_progress"}]},
            }
        ],
        "usage": {"input_tokens": 10, "output_tokens": 5},
    },
}


@pytest.fixture
def workspace(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    """A repository with a unit in progress, a log with errors and a Claude Code session."""
    assert cli("init", "--goal", "Check the import lists").code == 0
    assert cli("add", "Alpha", "--verify", "true", "--id", "alpha").code == 0
    assert cli("add", "Beta", "--verify", "true", "--id", "beta").code == 0
    assert cli("start", "alpha").code == 0
    (repo / "build.log").write_text("compiling\nerror: something broke\n")
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects"
    folder /= "".join(c if c.isalnum() else "-" for c in str(repo))
    folder.mkdir(parents=True)
    record = dict(SESSION_RECORD, cwd=str(repo))
    (folder / "s1.jsonl").write_text(json.dumps(record) + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "progress")
    (repo / "README.md").write_text("changed\n")
    return repo


def modules_after(argv: list[str], cwd: Path, out: Path, stdin: str | None = None) -> set[str]:
    """Run ``argv`` (a wrapper that dumps ``sys.modules`` into ``out``); the modules."""
    out.unlink(missing_ok=True)
    proc = subprocess.run(
        argv,
        cwd=cwd,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.exists(), proc.stderr
    return set(json.loads(out.read_text()))


def cli_modules(workspace: Path, tmp_path: Path, *args: str, stdin: str | None = None) -> set[str]:
    out = tmp_path / "modules.json"
    return modules_after(
        [sys.executable, "-c", CLI_WRAPPER, str(out), *args], workspace, out, stdin
    )


def heavy(found: set[str], forbidden: set[str]) -> list[str]:
    """Modules in ``found`` that are, or live inside, one of ``forbidden``."""
    return sorted(m for m in found if m in forbidden or m.split(".")[0] in forbidden)


def third_party(found: set[str]) -> set[str]:
    names = sys.stdlib_module_names
    return {m for m in found if m.split(".")[0] not in names and m != "__main__"}


def test_wrapper_sees_what_a_command_imports(workspace: Path, tmp_path: Path) -> None:
    found = cli_modules(workspace, tmp_path, "status")
    assert {"typer", "resume_kit.cli.commands.status", "resume_kit.model.progress"} <= found


@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_status(workspace: Path, tmp_path: Path, cache: str) -> None:
    if cache == "cold":
        from resume_kit.infra.paths import find_layout

        (find_layout(workspace).user_cache / "progress.json").unlink(missing_ok=True)
    found = cli_modules(workspace, tmp_path, "status")
    assert heavy(found, NEVER | RENDERING) == []


@pytest.mark.parametrize("args", [["snapshot"], ["snapshot", "--json"], ["snapshot", "--quiet"]])
def test_snapshot(workspace: Path, tmp_path: Path, args: list[str]) -> None:
    found = cli_modules(workspace, tmp_path, *args)
    assert "resume_kit.facts.snapshot" in found
    assert heavy(found, NEVER | RENDERING | {"rich", "resume_kit.brief.build", "sqlite3"}) == []


def test_snapshot_pre_compact_hook(workspace: Path, tmp_path: Path) -> None:
    payload = json.dumps({"cwd": str(workspace), "hook_event_name": "PreCompact"})
    found = cli_modules(
        workspace, tmp_path, "snapshot", "--quiet", "--trigger", "pre-compact", stdin=payload
    )
    assert heavy(found, NEVER | RENDERING | {"rich", "resume_kit.brief.build"}) == []


@pytest.mark.parametrize("fmt", ["markdown", "json", "claude-hook"])
def test_brief_without_summarize(workspace: Path, tmp_path: Path, fmt: str) -> None:
    stdin = (
        json.dumps({"cwd": str(workspace), "source": "startup"}) if fmt == "claude-hook" else None
    )
    found = cli_modules(workspace, tmp_path, "brief", "--format", fmt, stdin=stdin)
    assert "resume_kit.brief.render" in found
    # the shipped template renders through its generated Python: Jinja2 only for a
    # repository template a person approved (test_an_approved_repository_template_uses_jinja)
    assert heavy(found, NEVER | {"rich", "jinja2", "resume_kit.brief.shipped_gen"}) == []
    assert heavy(found, {"typer", "resume_kit.cli.verbs", "resume_kit.cli.params"}) == []
    # no summary asked for, no user config.yaml, approvals found without platformdirs; the
    # snapshot's and the brief's records go to the history's journal (no sqlite3); typing's
    # names come from core.typing_light
    assert heavy(found, {"platformdirs", "resume_kit.brief.summarize", "sqlite3", "typing"}) == []
    # infra.gitcmd starts git without subprocess (and its locale and selectors)
    assert heavy(found, {"subprocess", "selectors", "locale"}) == []
    # no side-effect patterns configured, no action of unknown outcome to quote
    assert heavy(found, {"resume_kit.core.side_effects", "shlex"}) == []


def test_a_full_brief_with_its_token_count_remembered_imports_no_pool(
    workspace: Path, tmp_path: Path
) -> None:
    """The second full build of the same brief: the count is remembered (no tiktoken, whose
    own import brings concurrent.futures), and the snapshot's threads need no executor."""
    env = dict(os.environ, RESUME_KIT_NO_FASTPATH="1", RESUME_KIT_NOW="1796000000")
    out = tmp_path / "modules.json"
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", CLI_WRAPPER, str(out), "brief"],
            cwd=workspace, env=env, capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    found = set(json.loads(out.read_text()))
    assert "resume_kit.brief.pipeline" in found
    assert heavy(found, {"tiktoken", "concurrent", "logging", "queue", "typer"}) == []


@pytest.mark.parametrize("args", [["--json", "--dry-run"], ["--unit", "beta"]])
def test_verify_next_starts_without_typer(workspace: Path, tmp_path: Path, args: list[str]) -> None:
    env_trust = dict(os.environ, RESUME_KIT_TRUST="all")
    out = tmp_path / "modules.json"
    argv = [sys.executable, "-c", CLI_WRAPPER, str(out), "verify-next", *args]
    proc = subprocess.run(
        argv, cwd=workspace, env=env_trust, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.exists(), proc.stderr
    assert proc.returncode == 0, proc.stderr
    found = set(json.loads(out.read_text()))
    assert "resume_kit.cli.commands.verify" in found
    # (ruamel still rewrites progress.yaml: verify-next's own issue)
    assert (
        heavy(found, RENDERING | {"typer", "resume_kit.cli.verbs", "resume_kit.cli.params"}) == []
    )
    assert heavy(found, {"platformdirs", "concurrent", "logging", "sqlite3", "typing"}) == []
    assert heavy(found, {"getpass"}) == []  # who holds a lease is asked only when there is one
    assert heavy(found, {"resume_kit.core.side_effects"}) == []  # no side-effect patterns set


def test_a_brief_typer_must_parse_still_goes_through_typer(workspace: Path, tmp_path: Path) -> None:
    found = cli_modules(workspace, tmp_path, "brief", "--format", "JSON")  # typer's usage error
    assert "typer" in found


def test_an_approved_repository_template_uses_jinja(workspace: Path, tmp_path: Path) -> None:
    template = workspace / ".resume-kit" / "templates" / "brief.md.j2"
    template.parent.mkdir(parents=True, exist_ok=True)
    template.write_text("MINE {{ next.id }}\n")
    env = dict(os.environ, RESUME_KIT_TRUST="all")
    out = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", CLI_WRAPPER, str(out), "brief"],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.exists(), proc.stderr
    assert proc.stdout.startswith("MINE"), proc.stdout
    assert "jinja2" in set(json.loads(out.read_text()))


# What serving the stored brief may import besides the standard library: the entry point and
# the stdlib-only modules it needs.
SERVED_BRIEF = {
    "resume_kit",
    "resume_kit.cli",
    "resume_kit.cli.app",
    "resume_kit.cli.fast_start",  # os only: the CLI's argv parser, which reads the request
    "resume_kit.brief",
    "resume_kit.brief.fastpath",
    "resume_kit.infra",
    "resume_kit.infra.deps",
    "resume_kit.infra.cachedir",
    "resume_kit.core.digest",
    "resume_kit.infra.gitcmd",
    "resume_kit.infra.errors",
    "resume_kit.infra.messages",  # with RESUME_KIT_DEBUG_FASTPATH only
    "resume_kit.core",
    "resume_kit.core.clock",
}


def served_modules(
    workspace: Path, tmp_path: Path, *args: str, stdin: str | None = None
) -> set[str]:
    """The modules of the first served run of ``args`` after a build. A build stores no
    receipt when an input was written within 0.1 s before it started (the fixture's files may
    be that fresh), and the fingerprint record it reads is rewritten while the fixture's
    files are under 2 s old: a few builds may pass first."""
    built = cli_modules(workspace, tmp_path, *args, stdin=stdin)
    assert "resume_kit.brief.pipeline" in built  # the first one is built
    served = built
    for _ in range(4):
        served = cli_modules(workspace, tmp_path, *args, stdin=stdin)
        if "resume_kit.brief.pipeline" not in served:
            break
    assert "resume_kit.brief.pipeline" not in served
    return served


def _bare_interpreter_modules() -> set[str]:
    """What this interpreter holds at the start of ``python -c``, site's modules included."""
    bare = subprocess.run(
        [sys.executable, "-c", "import sys; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(bare.stdout.split())


def beyond_site(found: set[str]) -> set[str]:
    """The third-party modules in ``found`` that site had not already loaded (a .pth's)."""
    return third_party(found) - _bare_interpreter_modules()


def test_unchanged_brief_is_served_with_the_standard_library_only(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setenv("RESUME_KIT_NOW", str(int(time.time())))
    served = served_modules(workspace, tmp_path, "brief")
    assert beyond_site(served) <= SERVED_BRIEF
    # warnings: os.get_exec_path imports it, so gitcmd finds git on the PATH without it
    never = NEVER | RENDERING | READING | {"rich", "typer", "typing", "warnings"}
    assert heavy(served, never) == []


def test_hook_run_post_commit_only_starts_the_snapshot(workspace: Path, tmp_path: Path) -> None:
    found = cli_modules(workspace, tmp_path, "hook", "run", "post-commit")
    assert heavy(found, NEVER | RENDERING | READING | {"rich"}) == []


HOOK_ENTRY = {
    "resume_kit",
    "resume_kit.infra",  # package __init__ modules: a docstring each
    "resume_kit.integrations",
    "resume_kit.infra.gitcmd",
    "resume_kit.infra.errors",
    "resume_kit.infra.safefs",
    # os and sys only: where the hook's copy of progress.yaml goes, so that the next commit on
    # the same bytes is answered by sh without Python (hook_entry.write_hook_copy)
    "resume_kit.infra.cachedir",
}


def _message(tmp_path: Path) -> Path:
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("Add alpha\n")
    return message


def test_installed_hook_entry_imports_nothing_but_itself(workspace: Path, tmp_path: Path) -> None:
    """What the installed prepare-commit-msg hook runs: ``python -I -S -c BOOTSTRAP``."""
    message = _message(tmp_path)
    out = tmp_path / "modules.json"
    code = f"OUT = {str(out)!r}\n" + HOOK_WRAPPER
    argv = [sys.executable, "-I", "-S", "-c", code, package_parent(), "prepare-commit-msg"]
    found = modules_after([*argv, "--repo", str(workspace), str(message)], workspace, out)
    assert "Resume-Unit: alpha" in message.read_text()  # it did its full work
    # gitcmd (the git overrides) and the safe open: small modules of
    # os-level code (docs/security.md)
    assert third_party(found) == {*HOOK_ENTRY, "resume_kit.integrations.hook_entry"}
    assert {"subprocess", "typing", "site", "pathlib"}.isdisjoint(found)


def test_python_m_hookentry(workspace: Path, tmp_path: Path) -> None:
    message = _message(tmp_path)
    out = tmp_path / "modules.json"
    argv = [sys.executable, "-c", MODULE_WRAPPER, str(out), "resume_kit.integrations.hook_entry"]
    found = modules_after([*argv, "prepare-commit-msg", str(message)], workspace, out)
    assert "Resume-Unit: alpha" in message.read_text()
    # run as __main__ by runpy; what site loads (setuptools' _distutils_hack, Debian's
    # sitecustomize) comes with the interpreter, not with us
    assert beyond_site(found) == HOOK_ENTRY
    assert "subprocess" not in found


def test_hooks_installed_before_the_package_tree_still_work(
    workspace: Path, tmp_path: Path
) -> None:
    """Old hook scripts import ``resume_kit.hookentry``; the shim hands them to the new module."""
    message = _message(tmp_path)
    old_bootstrap = "import sys\nsys.path.insert(0, sys.argv.pop(1))\nfrom resume_kit.hookentry import main\nsys.exit(main())\n"
    argv = [sys.executable, "-I", "-S", "-c", old_bootstrap, package_parent(), "prepare-commit-msg"]
    proc = subprocess.run([*argv, str(message)], cwd=workspace, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "Resume-Unit: alpha" in message.read_text()


@pytest.mark.parametrize("args", [["--help"], ["mcp", "--help"], ["integrate", "codex", "--help"]])
def test_the_mcp_sdk_is_imported_only_by_the_server(
    workspace: Path, tmp_path: Path, args: list[str]
) -> None:
    found = cli_modules(workspace, tmp_path, *args)
    assert heavy(found, {"mcp", "anyio", "tomlkit", "resume_kit.mcp_server"}) == []


def test_version_imports_nothing_beyond_the_standard_library(tmp_path: Path) -> None:
    found = cli_modules(tmp_path, tmp_path, "--version")
    out = tmp_path / "start.json"
    start = modules_after(  # what the interpreter loads before any code (site's .pth files)
        [
            sys.executable,
            "-c",
            f"import json, sys; json.dump(sorted(sys.modules), open({str(out)!r}, 'w'))",
        ],
        tmp_path,
        out,
    )
    assert sorted(m for m in third_party(found - start) if not m.startswith("resume_kit")) == []
    assert "typing" not in found - start  # a few ms of `--version`'s 40 (issue 18)
    assert {m for m in found if m.startswith("resume_kit")} == {
        "resume_kit",
        "resume_kit.cli",
        "resume_kit.cli.app",
    }


SERVED_HOOK_BRIEF = SERVED_BRIEF | {
    "resume_kit.integrations",
    "resume_kit.integrations.agent_input",
    "resume_kit.integrations.hook_gate",
    "resume_kit.integrations.compact_once",
    "resume_kit.facts",
    "resume_kit.facts.activity_log",
    "resume_kit.core.activity",
    "resume_kit.core.light_dataclass",  # activity's records (no typing, no inspect)
    "resume_kit.core.light_inits_hook",  # their __init__s compiled ahead (not the package's)
    "resume_kit.core.light_json",  # the payload and the log read and written without json
    "resume_kit.core.lazy_regex",  # activity's one pattern, compiled (and re imported) if used
    "resume_kit.infra.safefs",  # the activity log read, then written (the meter's event)
    "resume_kit.infra.atomic_file",
}
# What json (re, enum), pathlib (urllib.parse, ipaddress), datetime and contextlib would add
# to the served hook brief: most of its time before (2026-12-07: 35.6 ms against 22.0 ms,
# paired, on the small bench workspace, its floor 12.3 ms).
HOOK_PATH_NEVER = {"json", "re", "enum", "pathlib", "urllib", "datetime", "contextlib", "typing",
                   "resume_kit.core.light_inits"}  # fmt: skip


def test_unchanged_hook_brief_is_served_with_the_standard_library_only(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setenv("RESUME_KIT_NOW", str(int(time.time())))
    payload = json.dumps(
        {"session_id": "s-imports", "hook_event_name": "SessionStart", "source": "startup",
         "transcript_path": str(tmp_path / "s-imports.jsonl"), "cwd": str(workspace)}
    )  # fmt: skip
    args = ("brief", "--format", "claude-hook")
    served = served_modules(workspace, tmp_path, *args, stdin=payload)
    assert beyond_site(served) <= SERVED_HOOK_BRIEF
    assert heavy(served, NEVER | RENDERING | READING | {"rich", "typer", "yaml"}) == []
    assert heavy(served - _bare_interpreter_modules(), HOOK_PATH_NEVER) == []


def _entry_run(workspace: Path, payload: str) -> tuple[str, set[str]]:
    """The brief hooks' command as `integrate` writes it execs it (``python -I -S`` the entry
    script), with ``-X importtime``: (its stderr, the modules it imported)."""
    from resume_kit.integrations.settings import BRIEF_ARGS, ENTRY_SCRIPT

    argv = [sys.executable, "-I", "-S", "-X", "importtime", ENTRY_SCRIPT, *BRIEF_ARGS.split()]
    env = dict(os.environ, RESUME_KIT_DEBUG_FASTPATH="1")
    proc = subprocess.run(
        argv, cwd=workspace, input=payload, capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert '"hookSpecificOutput"' in proc.stdout
    lines = [line.split("|")[-1].strip() for line in proc.stderr.splitlines()]
    return proc.stderr, {name for name in lines if name and " " not in name}


def test_the_brief_hooks_entry_serves_without_site_packages(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started as the agents' brief hooks start it, a served brief never imports site; a
    built one loads site-packages late, and builds."""
    import time

    monkeypatch.setenv("RESUME_KIT_NOW", str(int(time.time())))
    payload = json.dumps(
        {"session_id": "s-entry", "hook_event_name": "SessionStart", "source": "startup",
         "transcript_path": str(tmp_path / "s-entry.jsonl"), "cwd": str(workspace)}
    )  # fmt: skip
    stderr, built = _entry_run(workspace, payload)
    assert "building" in stderr
    assert {"site", "resume_kit.brief.pipeline"} <= built
    for _ in range(4):  # see served_modules: a few builds may pass first
        stderr, served = _entry_run(workspace, payload)
        if "served the stored brief" in stderr:
            break
    assert "served the stored brief" in stderr
    assert "site" not in served
    # served before the command line is imported (cli.app), then ended as the CLI ends
    assert third_party(served) <= SERVED_HOOK_BRIEF - {"resume_kit.cli.app"} | {
        "resume_kit.cli.process_end"
    }
    assert heavy(served, HOOK_PATH_NEVER | {"typer", "yaml"}) == []
