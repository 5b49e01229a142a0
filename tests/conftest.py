"""Shared fixtures: real git repositories in temporary folders, the real CLI (in this process
or in a subprocess, also on a terminal), isolated HOME."""

from __future__ import annotations

import contextlib
import importlib
import os
import pty
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------ the development tier
# ``pytest -m "not slow"`` (the README's development command) leaves out what costs most and
# repeats most; plain ``pytest`` (CI) runs everything. Slow are: whole suites marked in their
# files (crash harness, concurrency); the tests below, each about a second of CPU or more
# (3 s or more of wall time measured at load 8 on 2 cores, 2026-12-01, or 4 s at load 6 once
# those were out; the demo's tests share one run of it); all but every
# TABLE_STEP-th case of the tables below; and Hypothesis examples beyond FAST_EXAMPLES.
SLOW_TESTS = frozenset(
    {
        "tests/unit/test_fingerprint_reuse.py::test_reused_fingerprints_equal_a_full_recomputation",
        "tests/adversarial/test_injection.py::test_status_and_snapshot_output_cannot_be_forged",
        "tests/unit/test_summarize.py::test_changed_inputs_or_model_ask_again",
        "tests/adversarial/test_hostile_input.py::test_a_silent_hook_stdin_never_hangs",
        "tests/adversarial/test_security_statedir.py::test_integrate_aider_never_writes_through_a_committed_symlink",
        "tests/unit/test_mcp_doc.py::test_docs_mcp_md_matches_the_tool_schemas",
        "tests/e2e/test_mcp_server.py::test_lists_the_tools_with_schemas",
        "tests/e2e/test_mcp_server.py::test_calls_each_tool",
        "tests/e2e/test_mcp_server.py::test_an_agent_added_command_is_refused",
        "tests/e2e/test_mcp_server.py::test_errors_carry_the_cli_line_and_hint",
        "tests/e2e/test_mcp_server.py::test_bad_arguments_are_rejected_by_schema",
        "tests/e2e/test_mcp_server.py::test_cancel_stops_the_process_group_and_marks_nothing",
        "tests/e2e/test_timeline.py::test_timeline_counts_and_burn_down",
        "tests/e2e/test_timeline.py::test_the_html_report_renders_in_headless_chromium",
        "tests/e2e/test_history_crash.py::test_a_kill_9_during_writes_leaves_a_sound_database",
        "tests/e2e/test_drill.py::test_a_sound_setup_holds_with_reproducible_kills_and_a_saved_receipt",
        "tests/e2e/test_drill.py::test_a_verify_that_passes_only_the_first_time_breaks_the_drill",
        "tests/e2e/test_drill.py::test_an_artifact_outside_the_work_tree_breaks_the_drill",
        "tests/e2e/test_drill.py::test_a_verify_that_touches_a_shared_file_in_the_live_tree_breaks_the_drill",
        "tests/adversarial/test_injection.py::test_fuzzed_file_names_through_the_real_cli",
        "tests/adversarial/test_injection.py::test_json_and_hook_formats_keep_it_data",
        "tests/adversarial/test_security_hooks.py::test_a_filter_driver_that_cannot_be_switched_off_stops_git_before_it_starts",
        "tests/e2e/test_brief_scenarios.py::test_facts_other_points_add",
        "tests/e2e/test_brief_scenarios.py::test_the_brief_states_the_scenario_facts",
        "tests/e2e/test_brief_scenarios.py::test_the_floor_fits_300_tokens_and_keeps_the_next_unit",
        "tests/cli/test_brief_meter.py::test_tokens_and_compactions_since_the_last_verified_unit",
        "tests/cli/test_integrate_agents.py::test_the_brief_is_delivered_once_per_compaction",
        "tests/cli/test_integrate_copilot.py::test_the_brief_goes_with_the_first_prompt_after_each_start",
        "tests/unit/test_summarize.py::test_second_call_is_served_from_the_cache",
        "tests/cli/test_tool_hook.py::test_the_installed_command_line_runs_the_hook",
        "tests/cli/test_no_progress.py::test_compactions_without_a_verified_unit",
        "tests/cli/test_verify.py::test_background_writer_does_not_hang_the_run",
        "tests/adversarial/test_injection.py::test_fuzzed_untrusted_text_never_leaves_its_code",
        "tests/adversarial/test_injection.py::test_injected_text_stays_quoted_data_in_the_brief",
        "tests/adversarial/test_secrets_corpus.py::test_no_secret_reaches_any_output",
        "tests/adversarial/test_security_hooks.py::test_a_killed_verify_takes_its_command_with_it",
        "tests/adversarial/test_security_hooks.py::test_git_runs_no_program_the_repository_configured",
        "tests/adversarial/test_security_hooks.py::test_the_post_commit_log_follows_no_committed_symlink",
        "tests/adversarial/test_security_hooks.py::test_unitcheck_and_verify_next_never_run_the_same_unit_at_once",
        "tests/adversarial/test_security_readers.py::test_a_committed_progress_cache_is_never_believed",
        "tests/adversarial/test_security_readers.py::test_a_fifo_trust_file_never_hangs",
        "tests/adversarial/test_security_readers.py::test_a_repository_config_cannot_switch_on_the_network",
        "tests/adversarial/test_security_readers.py::test_devices_and_fifos_in_the_repository_never_hang_a_command",
        "tests/adversarial/test_security_readers.py::test_escaping_patterns_are_refused_at_validation",
        "tests/adversarial/test_security_readers.py::test_nothing_outside_the_work_tree_reaches_snapshot_status_or_brief",
        "tests/adversarial/test_security_readers.py::test_repository_limits_are_bounded",
        "tests/adversarial/test_security_redact.py::test_a_nul_byte_or_a_huge_verify_command_is_exit_2_at_plan_and_at_load",
        "tests/adversarial/test_security_redact.py::test_a_private_key_printed_by_a_failing_verify_command_never_reaches_any_output",
        "tests/adversarial/test_security_redact.py::test_branch_names_and_commit_trailers_are_redacted_in_json_output_and_stored_snapshots",
        "tests/adversarial/test_security_redact.py::test_nan_and_infinite_durations_are_rejected_and_json_stays_valid",
        "tests/adversarial/test_security_redact.py::test_plan_with_the_readme_template_never_runs_a_file_name",
        "tests/adversarial/test_security_redact.py::test_printed_fields_escape_control_bidi_and_zero_width_characters",
        "tests/adversarial/test_security_statedir.py::test_a_symlinked_cache_folder_is_refused",
        "tests/adversarial/test_security_statedir.py::test_a_symlinked_state_folder_is_refused_by_every_command",
        "tests/adversarial/test_security_statedir.py::test_pruning_removes_only_names_resume_kit_generates",
        "tests/adversarial/test_security_statedir.py::test_snapshot_pruning_never_deletes_through_a_symlinked_snapshots_folder",
        "tests/adversarial/test_security_statedir.py::test_the_history_copy_never_lands_in_a_symlinked_history_folder",
        "tests/adversarial/test_security_templates.py::test_a_broken_or_hostile_template_is_one_line_exit_2",
        "tests/adversarial/test_security_templates.py::test_a_template_that_asks_for_huge_values_is_refused",
        "tests/adversarial/test_security_templates.py::test_a_template_that_runs_forever_is_stopped",
        "tests/adversarial/test_security_templates.py::test_approval_pins_the_exact_content",
        "tests/adversarial/test_security_templates.py::test_approved_template_still_cannot_include_files_of_the_repository",
        "tests/adversarial/test_security_templates.py::test_integrate_claude_denies_the_agent_resume_kit_trust",
        "tests/adversarial/test_security_templates.py::test_prose_from_the_progress_file_cannot_forge_the_brief",
        "tests/adversarial/test_security_templates.py::test_the_brief_marks_an_unapproved_next_command",
        "tests/adversarial/test_security_templates.py::test_the_time_limit_holds_off_the_main_thread_too",
        "tests/adversarial/test_security_templates.py::test_trust_all_warns_once_when_it_takes_effect",
        "tests/adversarial/test_security_templates.py::test_trust_asks_a_person_per_item_on_a_terminal",
        "tests/adversarial/test_security_templates.py::test_trust_without_a_terminal_approves_nothing",
        "tests/adversarial/test_security_templates.py::test_trust_yes_is_the_explicit_approval_of_everything_shown",
        "tests/cli/test_brief.py::test_cli_brief_on_a_real_repository",
        "tests/cli/test_brief.py::test_cli_summary_through_a_local_messages_api",
        "tests/cli/test_brief.py::test_untrusted_strings_cannot_break_out_of_their_blocks",
        "tests/cli/test_run.py::test_history_keeps_the_version_from_before_the_run",
        "tests/cli/test_run.py::test_jobs_4_gives_the_same_final_state_as_jobs_1",
        "tests/cli/test_run.py::test_sigkill_at_a_random_point_then_resume_runs_every_unit_once",
        "tests/cli/test_status.py::test_done_when_rebase_dirty_tree_failing_test_and_edited_done_unit",
        "tests/cli/test_verify.py::test_timeout_escalates_to_sigkill_when_sigterm_is_ignored",
        "tests/e2e/test_demo.py::test_the_first_brief_answers_the_questions_within_its_budget",
        "tests/e2e/test_demo.py::test_the_killed_run_resumes_where_it_stopped_and_runs_nothing_twice",
        "tests/e2e/test_demo.py::test_the_later_brief_shows_progress_and_the_next_unit",
        "tests/e2e/test_demo.py::test_the_repository_left_behind_and_a_rerun",
        "tests/e2e/test_demo.py::test_the_story_has_its_nine_steps_in_plain_text",
        "tests/e2e/test_demo.py::test_the_workspace_was_planned_and_run_by_the_real_cli",
        "tests/e2e/test_demo.py::test_verify_next_fails_then_the_fix_makes_it_pass_with_evidence",
        "tests/e2e/test_hooks.py::test_a_broken_progress_file_never_blocks_a_commit",
        "tests/e2e/test_imports.py::test_brief_without_summarize",
        "tests/e2e/test_imports.py::test_python_m_hookentry",
        "tests/e2e/test_imports.py::test_snapshot",
        "tests/e2e/test_imports.py::test_status",
        "tests/e2e/test_imports.py::test_wrapper_sees_what_a_command_imports",
        "tests/e2e/test_leases.py::test_a_hostile_remote_url_runs_nothing",
        "tests/e2e/test_leases.py::test_a_pass_records_evidence_and_releases_the_lease",
        "tests/e2e/test_leases.py::test_expired_lease_is_taken_over_and_a_fast_clock_cannot_steal",
        "tests/e2e/test_leases.py::test_claim_without_an_id_moves_past_units_it_had_not_heard_were_leased",
        "tests/e2e/test_leases.py::test_kill_9_during_a_claim_leaves_no_lease_or_a_valid_one",
        "tests/e2e/test_leases.py::test_one_holder_at_a_time_across_clones",
        "tests/e2e/test_leases.py::test_status_and_the_brief_show_who_holds_what_and_skip_it",
        "tests/e2e/test_leases.py::test_unreachable_remote_exits_2_and_offline_takes_the_local_lock",
        "tests/e2e/test_leases.py::test_three_concurrent_claimers_one_winner_each_time",
        "tests/e2e/test_leases.py::test_verify_next_and_run_skip_units_leased_by_someone_else",
        "tests/e2e/test_leases.py::test_worktrees_of_one_clone_share_the_local_refs",
        "tests/e2e/test_merge_driver.py::test_conflicting_titles_stop_the_merge_with_markers",
        "tests/e2e/test_merge_driver.py::test_git_merge_of_divergent_progress_files_keeps_both_verified_units",
        "tests/e2e/test_unit_claim.py::test_a_unit_being_verified_is_not_started_twice",
        "tests/e2e/test_unit_claim.py::test_the_command_of_a_killed_verify_keeps_its_unit_claimed",
        "tests/unit/test_batch_store.py::test_checkpoints_write_the_same_bytes_as_a_full_save",
        "tests/unit/test_batch_store.py::test_threads_checkpointing_at_once_lose_nothing",
        "tests/unit/test_harness.py::test_same_result_as_a_subprocess",
        "tests/unit/test_render.py::test_any_size_fits_any_budget_and_keeps_the_next_unit",
        "tests/unit/test_store.py::test_three_processes_writing_at_once_lose_no_update",
        "tests/unit/test_summarize.py::test_success_returns_the_validated_summary_and_usage",
        "tests/unit/test_tokens_cache.py::test_a_damaged_cache_is_rebuilt",
        "tests/unit/test_workspace_misc.py::test_real_pytest_lastfailed",
        "tests/unit/test_shipped_renderer.py::test_the_golden_scenarios_render_the_same",
    }
)
SAMPLED_TABLES = frozenset(
    {
        "tests/adversarial/test_hostile_input.py::test_hostile_input",
        "tests/unit/test_fingerprint_reuse.py::test_each_step_on_each_path",
    }
)
TABLE_STEP = 6
FAST_EXAMPLES = 20


def fast_tier(config: pytest.Config) -> bool:
    return "not slow" in str(config.getoption("markexpr", "") or "")


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seen: dict[str, int] = {}
    for item in items:
        function = item.nodeid.split("[", 1)[0]
        if function in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        elif function in SAMPLED_TABLES:
            seen[function] = seen.get(function, -1) + 1
            if seen[function] % TABLE_STEP:
                item.add_marker(pytest.mark.slow)
    if fast_tier(config):
        _narrow_hypothesis(items)


def _narrow_hypothesis(items: list[pytest.Item]) -> None:
    from hypothesis import settings

    for item in items:
        test = getattr(item, "obj", None)
        if getattr(test, "hypothesis", None) is None:
            continue
        # Where @given keeps the test's settings (hypothesis' own pytest plugin reads it too);
        # an explicit @settings(max_examples=N) wins over any profile, so it is narrowed here.
        current = test._hypothesis_internal_use_settings  # type: ignore[union-attr]
        if current.max_examples > FAST_EXAMPLES:
            test._hypothesis_internal_use_settings = settings(  # type: ignore[union-attr]
                current, max_examples=FAST_EXAMPLES
            )


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """No test may touch the real home directory or user data (trust approvals, agent sessions)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Author")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "author@example.com")
    monkeypatch.setenv("NO_COLOR", "1")
    for name in (
        "RESUME_KIT_TRUST",
        "RESUME_KIT_DEBUG",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test Author\n\temail = author@example.com\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        "[advice]\n\tdetachedHead = false\n"
    )
    return home


def path_of_only(tmp_path: Path, tools: tuple[str, ...]) -> str:
    """A PATH folder (``tmp_path/bin``) holding links to just these programs: no resume-kit
    console script on it, as for a hook run where the CLI is not installed."""
    import shutil

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in tools:
        found = shutil.which(tool)
        if found and not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, check=check, text=True, capture_output=True)


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def out(self) -> str:
        return self.stdout


def run_cli_subprocess(
    *args: str,
    cwd: Path,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Result:
    """Run the real ``resume-kit`` CLI in a subprocess (``python -m resume_kit``)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "resume_kit", *args],
        cwd=cwd,
        input=input,
        text=True,
        capture_output=True,
        env=full_env,
        timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


# Module-level state of resume_kit that lives "once per process": a subprocess starts with it
# empty, so the in-process runner empties it before every call. A name that moves or goes
# away fails loudly here (AttributeError) rather than leaking state silently.
PROCESS_STATE: tuple[tuple[str, str], ...] = (
    ("resume_kit.cli.ui", "stdout_console"),  # bound to the sys.stdout of its first call
    ("resume_kit.cli.ui", "stderr_console"),
    ("resume_kit.infra.trust", "_warned_trust_all"),  # the RESUME_KIT_TRUST=all warning
    ("resume_kit.progress_file.config", "_NOTED"),  # the config.yaml note
    ("resume_kit.progress_file.io", "_LOADED"),  # the text this process last read or wrote
    ("resume_kit.infra.gitcmd", "_filter_cache"),  # filter drivers per directory
    ("resume_kit.infra.gitcmd", "_core_cache"),  # core.* settings per directory
    ("resume_kit.infra.gitcmd", "_read_ahead"),  # the config read while rev-parse ran
    ("resume_kit.runner.conflicts", "_started"),  # the conflict check started ahead
    ("resume_kit.facts.history_db", "_TRACE"),  # the process's trace id
    ("resume_kit.infra.collector", "_one_shot"),  # set by the console script's entry
    ("resume_kit.infra.detach", "_pending"),  # work left for the end of such a process
)
# Kept on purpose, being pure functions of the installed package: the cl100k ranks
# (resume_kit.infra.tokens._encoding), the YAML loader class, lru_caches of pure functions.


def reset_process_state() -> None:
    """Empty what a fresh ``resume-kit`` process would start without (see PROCESS_STATE)."""
    for module_name, attr in PROCESS_STATE:
        module = sys.modules.get(module_name)
        if module is None:
            continue  # never imported: nothing to forget
        value = getattr(module, attr)
        if hasattr(value, "cache_clear"):
            value.cache_clear()
        elif isinstance(value, (dict, set, list)):
            value.clear()
        elif isinstance(value, bool):
            setattr(module, attr, False)
        else:  # pragma: no cover - a new kind of state: teach this function about it
            raise TypeError(f"{module_name}.{attr}: cannot reset a {type(value).__name__}")


@contextlib.contextmanager
def _standard_streams(stdin_text: str | None) -> Iterator[dict[str, str]]:
    """Point file descriptors 0, 1, 2 and sys.stdin/stdout/stderr at fresh files (stdin: the
    input or /dev/null), as a subprocess would see them: what the CLI's own children (git,
    verify commands) write lands in the same files. Everything is restored afterwards; the
    yielded dict then holds ``stdout`` and ``stderr`` as ``subprocess.run(text=True)`` would
    (UTF-8, universal newlines)."""
    captured: dict[str, str] = {}
    with contextlib.ExitStack() as files:
        out_file = files.enter_context(tempfile.TemporaryFile())
        err_file = files.enter_context(tempfile.TemporaryFile())
        if stdin_text is None:
            in_fd = files.enter_context(open(os.devnull, "rb")).fileno()
        else:
            in_file = files.enter_context(tempfile.TemporaryFile())
            in_file.write(stdin_text.encode())
            in_file.seek(0)
            in_fd = in_file.fileno()
        saved_streams = (sys.stdin, sys.stdout, sys.stderr)
        for stream in saved_streams:
            with contextlib.suppress(Exception):
                stream.flush()
        saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
        try:
            for fd, target in ((0, in_fd), (1, out_file.fileno()), (2, err_file.fileno())):
                os.dup2(target, fd)
            with (
                open(0, encoding="utf-8", closefd=False) as sys.stdin,
                open(1, "w", encoding="utf-8", closefd=False) as sys.stdout,
                open(
                    2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1
                ) as sys.stderr,
            ):
                yield captured
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            for fd, saved in zip((0, 1, 2), saved_fds, strict=True):
                os.dup2(saved, fd)
                os.close(saved)
        for name, handle in (("stdout", out_file), ("stderr", err_file)):
            handle.seek(0)
            text = handle.read().decode("utf-8")
            captured[name] = text.replace("\r\n", "\n").replace("\r", "\n")


def run_cli_in_process(
    *args: str,
    cwd: Path,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    fast_start: bool = True,
) -> Result:
    """Run the real CLI's ``main`` in this process, seeing what a subprocess would: ``cwd``
    as the working directory, ``os.environ`` plus ``env``, fresh standard streams, per-process
    state emptied (PROCESS_STATE). Working directory, environment and streams are restored
    afterwards. ``timeout`` is accepted for the same signature and not enforced.
    ``fast_start=False``: through typer even where cli.fast_start would parse."""
    del timeout
    saved_cwd = os.getcwd()
    saved_env = dict(os.environ)
    saved_argv = sys.argv
    main = importlib.import_module("resume_kit.cli.app").main
    code = 0
    try:
        os.chdir(cwd)
        os.environ.update(env or {})
        sys.argv = ["resume-kit", *args]
        reset_process_state()
        with _standard_streams(input) as captured:
            try:
                main(list(args), fast_start=fast_start)
            except SystemExit as exc:
                if exc.code is None:
                    code = 0
                elif isinstance(exc.code, int):
                    code = exc.code
                else:  # sys.exit("message"): printed on stderr, status 1
                    sys.stderr.write(f"{exc.code}\n")
                    code = 1
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Result(code, captured["stdout"], captured["stderr"])


# Which runner ``run_cli`` and the ``cli`` fixture use for the running test (set by the
# autouse fixture ``_choose_runner``).
_runner: Callable[..., Result] = run_cli_subprocess
IN_PROCESS_TIERS = ("unit", "cli")


def run_cli(
    *args: str,
    cwd: Path,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Result:
    """Run the real CLI the way the running test's tier asks: in this process for tests in
    ``tests/unit`` and ``tests/cli`` (unless marked ``subprocess``), in a subprocess
    everywhere else. Same arguments and ``Result`` either way."""
    return _runner(*args, cwd=cwd, input=input, env=env, timeout=timeout)


def tier_of(path: Path) -> str | None:
    """``unit``, ``cli``, ``e2e`` or ``adversarial`` for a test file, None outside the tiers."""
    try:
        parts = path.resolve().relative_to(REPO_ROOT / "tests").parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 else None


@pytest.fixture(autouse=True)
def _choose_runner(request: pytest.FixtureRequest) -> Iterator[None]:
    global _runner
    in_process = (
        tier_of(Path(str(request.node.path))) in IN_PROCESS_TIERS
        and request.node.get_closest_marker("subprocess") is None
    )
    _runner = run_cli_in_process if in_process else run_cli_subprocess
    try:
        yield
    finally:
        _runner = run_cli_subprocess


@dataclass
class TerminalResult:
    code: int
    stdout: bytes
    shown: str  # what the terminal received on stderr, escape sequences included


def run_cli_on_terminal(*args: str, cwd: Path, env: dict[str, str]) -> TerminalResult:
    """Run the real CLI with stderr on a pseudo-terminal (TERM=xterm, 100 columns), stdout on
    a pipe, and collect everything the terminal was sent."""
    master, replica = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "resume_kit", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=replica,
        env={**os.environ, **env, "TERM": "xterm", "COLUMNS": "100"},
    )
    os.close(replica)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = proc.communicate(timeout=60)
    reader.join(timeout=10)
    os.close(master)
    return TerminalResult(proc.returncode, out, b"".join(chunks).decode("utf-8", "replace"))


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """A fresh git repository with one commit."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    yield root


@pytest.fixture
def cli(repo: Path):  # type: ignore[no-untyped-def]
    """``cli("status", "--json")`` runs the real CLI inside ``repo`` (through ``run_cli``: in
    this process or a subprocess, as the test's tier asks)."""

    def call(*args: str, **kwargs: object) -> Result:
        kwargs.setdefault("cwd", repo)
        return run_cli(*args, **kwargs)  # type: ignore[arg-type]

    return call
