"""``resume-kit demo [DIR]``: build an interrupted batch job and walk through resuming it.

Every step runs the real CLI (``python -m resume_kit``) in the demo repository, as a user
would type it, and shows its real output: Rich panels on a terminal, plain text when piped or
with ``NO_COLOR``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from resume_kit import demo
from resume_kit.errors import EXIT_USAGE, ResumeKitError

if TYPE_CHECKING:
    from resume_kit.demo import BuildReport, CliResult

EXIT_OFF_SCRIPT = 70  # a step did not behave as the story says: a bug, reported as one
RUN_KILL_AFTER = 6  # units the batch run starts before the demo kills it
RUN_RESUME_UNITS = 5  # units the resumed run does (enough to show where it starts)
PLAIN_WIDTH = 88  # prose is wrapped to this in plain output; command output never is


# --------------------------------------------------------------------------- the folder


def _is_earlier_demo(path: Path) -> bool:
    marker = path / ".git" / demo.MARKER_NAME
    names = {entry.name for entry in path.iterdir()}
    return marker.is_file() and names <= demo.DEMO_ENTRIES


def _clear(path: Path) -> None:
    for entry in path.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def prepare_folder(directory: Path | None) -> tuple[Path, bool]:
    """(the demo's root, whether an earlier demo there was replaced).

    No ``directory``: a new temporary folder. A missing one is created; an empty one is used;
    an earlier demo is rebuilt; anything else is refused (exit 2), never touched.
    """
    if directory is None:
        return Path(tempfile.mkdtemp(prefix="resume-kit-demo-")).resolve(), False
    path = directory.expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise ResumeKitError(
            f"{directory} exists and is not a folder",
            hint="give a new or empty folder, or no DIR for a temporary one",
            exit_code=EXIT_USAGE,
        )
    if not path.exists():
        path.mkdir(parents=True)
        return path, False
    if not any(path.iterdir()):
        return path, False
    if _is_earlier_demo(path):
        _clear(path)
        return path, True
    raise ResumeKitError(
        f"{directory} is not empty and is not an earlier demo; nothing was changed",
        hint="give a new or empty folder (e.g. `resume-kit demo /tmp/rk-demo`), "
        "or no DIR for a temporary one",
        exit_code=EXIT_USAGE,
    )


# --------------------------------------------------------------------------- presenting


class Presenter(Protocol):
    def title(self, text: str, lines: list[str]) -> None: ...
    def step(self, number: int, total: int, title: str, why: str) -> None: ...
    def command(self, result: CliResult, *, lexer: str | None = None) -> None: ...
    def block(self, title: str, text: str, lexer: str | None = None) -> None: ...
    def note(self, text: str, *, good: bool | None = None) -> None: ...
    def working(self, text: str) -> contextlib.AbstractContextManager[Callable[[str], None]]: ...


def _typed_line(result: CliResult) -> str:
    return f"$ {result.typed}"


def _exit_note(result: CliResult) -> str:
    return f"exit {result.code} · {result.seconds:.1f} s"


class PlainPresenter:
    """Plain text: headings made of characters, output indented, nothing else."""

    def __init__(self, write: Callable[[str], None]):
        self.write = write

    def title(self, text: str, lines: list[str]) -> None:
        self.write(text)
        self.write("=" * len(text))
        for line in lines:
            self.write(line)
        self.write("")

    def step(self, number: int, total: int, title: str, why: str) -> None:
        heading = f"Step {number} of {total}: {title}"
        self.write("")
        self.write(heading)
        self.write("-" * len(heading))
        for line in textwrap.wrap(why, PLAIN_WIDTH):
            self.write(line)
        self.write("")

    def command(self, result: CliResult, *, lexer: str | None = None) -> None:
        self.write(_typed_line(result))
        for stream in (result.stdout, result.stderr):
            for line in stream.rstrip("\n").splitlines():
                self.write(f"  {line}" if line else "")
        self.write(f"  [{_exit_note(result)}]")
        self.write("")

    def block(self, title: str, text: str, lexer: str | None = None) -> None:
        self.write(f"{title}:")
        for line in text.rstrip("\n").splitlines():
            self.write(f"  {line}" if line else "")
        self.write("")

    def note(self, text: str, *, good: bool | None = None) -> None:
        for line in textwrap.wrap(text, PLAIN_WIDTH, break_on_hyphens=False) or [""]:
            self.write(line)

    @contextlib.contextmanager
    def working(self, text: str) -> Iterator[Callable[[str], None]]:
        self.write(f"{text} …")
        yield lambda detail: self.write(f"  {detail}")


class RichPresenter:
    """Rules, panels and highlighted blocks on a terminal; data is never read as markup."""

    def __init__(self, console: Any):
        self.console = console

    def title(self, text: str, lines: list[str]) -> None:
        from rich.panel import Panel
        from rich.text import Text

        body = Text("\n".join(lines))
        self.console.print(Panel(body, title=Text(text, style="bold"), border_style="cyan"))

    def step(self, number: int, total: int, title: str, why: str) -> None:
        from rich.text import Text

        self.console.print()
        heading = Text(f"Step {number}/{total} · ", style="bold cyan")
        heading.append(title, style="bold")
        self.console.rule(heading, align="left", style="cyan")
        self.console.print(Text(why, style="italic"))
        self.console.print()

    def command(self, result: CliResult, *, lexer: str | None = None) -> None:
        from rich.console import Group
        from rich.panel import Panel
        from rich.syntax import Syntax
        from rich.text import Text

        self.console.print(Text(_typed_line(result), style="bold"))
        parts: list[Any] = []
        if result.stdout.strip():
            if lexer:
                parts.append(
                    Syntax(result.stdout.rstrip("\n"), lexer, theme="ansi_dark", word_wrap=True)
                )
            else:
                parts.append(Text(result.stdout.rstrip("\n")))
        if result.stderr.strip():
            parts.append(Text(result.stderr.rstrip("\n"), style="yellow"))
        ok = result.code == 0
        self.console.print(
            Panel(
                Group(*parts) if parts else Text("(no output)", style="dim"),
                subtitle=Text(_exit_note(result), style="green" if ok else "red"),
                subtitle_align="right",
                border_style="green" if ok else "red",
            )
        )

    def block(self, title: str, text: str, lexer: str | None = None) -> None:
        from rich.panel import Panel
        from rich.syntax import Syntax
        from rich.text import Text

        body: Any = (
            Syntax(text.rstrip("\n"), lexer, theme="ansi_dark", word_wrap=True)
            if lexer
            else Text(text.rstrip("\n"))
        )
        self.console.print(Panel(body, title=Text(title), title_align="left", border_style="dim"))

    def note(self, text: str, *, good: bool | None = None) -> None:
        from rich.text import Text

        style = {True: "green", False: "red", None: ""}[good]
        self.console.print(Text(text, style=style))

    @contextlib.contextmanager
    def working(self, text: str) -> Iterator[Callable[[str], None]]:
        from rich.text import Text

        with self.console.status(Text(text), spinner="dots") as status:

            def update(detail: str) -> None:
                status.update(Text(f"{text}: {detail}"))

            yield update


def presenter() -> Presenter:
    from resume_kit.ui import colour_allowed, stdout_console

    rich_ok = colour_allowed(sys.stdout) and os.environ.get("TERM", "") != "dumb"
    if rich_ok:
        return RichPresenter(stdout_console())
    from resume_kit.ui import out

    return PlainPresenter(out)


# --------------------------------------------------------------------------- the story


class Story:
    """Runs the steps in order against one built workspace."""

    def __init__(self, root: Path, show: Presenter, total_steps: int):
        self.root = root
        self.show = show
        self.total = total_steps
        self.number = 0
        self.started = time.monotonic()

    def step(self, title: str, why: str) -> None:
        self.number += 1
        self.show.step(self.number, self.total, title, why)

    def cli(self, *args: str, expect: int = 0, lexer: str | None = None) -> CliResult:
        """Run and show ``resume-kit ARGS``; a brief (``lexer``) keeps stdout to itself."""
        result = demo.run_cli(self.root, *args, merged=lexer is None)
        self.show.command(result, lexer=lexer)
        if result.code != expect:
            raise ResumeKitError(
                f"the demo went off script: `{result.typed}` exited {result.code}, "
                f"expected {expect}",
                hint=f"this is a bug in resume-kit; the workspace is kept in {self.root}",
                exit_code=EXIT_OFF_SCRIPT,
            )
        return result


def _setup_lines(report: BuildReport) -> list[str]:
    lines = [f"$ {r.typed}   # exit {r.code}" for r in report.commands]
    lines.append("")
    lines.append("git log --oneline (oldest first):")
    lines.extend(f"  {line}" for line in report.commits)
    return lines


def _tokens(text: str) -> int | None:
    try:
        from resume_kit.tokens import count_tokens

        return count_tokens(text)
    except Exception:  # the count is a nicety here; the brief itself already fit its budget
        return None


def _evidence_lines(root: Path, unit_id: str) -> list[str]:
    from resume_kit.paths import find_layout
    from resume_kit.progress_io import load

    unit = load(find_layout(root)).progress.require_unit(unit_id)
    ev = unit.evidence
    if ev is None:
        return [f"{unit_id}: status {unit.status}, no evidence"]
    return [
        f"status:      {unit.status}",
        f"verified_at: {ev.verified_at}",
        f"commit:      {ev.commit}",
        f"dirty:       {str(ev.dirty).lower()}"
        + ("   (the fix in extract.py is not committed yet)" if ev.dirty else ""),
        f"fingerprint: {ev.fingerprint}",
        f"log:         {ev.log}",
    ]


def _show_brief(story: Story) -> CliResult:
    result = story.cli("brief", lexer="markdown")
    tokens = _tokens(result.stdout)
    if tokens is not None:
        story.show.note(
            f"{tokens} tokens (cl100k_base): small enough to paste at the top of any session."
        )
    return result


_RUN_LOG = re.compile(r"^(.+)-\d{8}T\d{6,9}Z(?:-\d+)?\.log$")  # <unit>-<UTC stamp>[-n].log


def _run_logs(root: Path) -> dict[str, int]:
    """How many verify runs each unit has had (one log per run in .resume-kit/runs/)."""
    counts: dict[str, int] = {}
    for log in (root / ".resume-kit" / "runs").glob("*.log"):
        match = _RUN_LOG.match(log.name)
        if match:
            counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return counts


def _done_ids(root: Path) -> list[str]:
    from resume_kit.paths import find_layout
    from resume_kit.progress_io import load

    return [u.id for u in load(find_layout(root)).progress.units if u.status == "done"]


def _id_list(ids: list[str]) -> str:
    """``docs-138 … docs-143`` for a run of consecutive demo ids, else a comma list."""
    numbers = [int(i.rsplit("-", 1)[1]) for i in ids]
    if len(ids) > 2 and numbers == list(range(numbers[0], numbers[0] + len(ids))):
        return f"{ids[0]} … {ids[-1]}"
    return ", ".join(ids) or "none"


def _started_since(before: dict[str, int], after: dict[str, int]) -> list[str]:
    return sorted(u for u, n in after.items() if n > before.get(u, 0))


def _run_and_kill(root: Path) -> CliResult:
    """``resume-kit run`` in the background, SIGKILLed once RUN_KILL_AFTER units have started
    and one more is under way (as a closed laptop or the OOM killer would: no clean-up)."""
    logs_before = sum(_run_logs(root).values())
    started = time.monotonic()
    with tempfile.TemporaryFile() as output:
        proc = subprocess.Popen(
            [sys.executable, "-m", "resume_kit", "run"],
            cwd=root,
            env=demo.cli_env(),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = started + 120
            while proc.poll() is None and time.monotonic() < deadline:
                if sum(_run_logs(root).values()) - logs_before > RUN_KILL_AFTER:
                    break
                time.sleep(0.02)
        finally:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGKILL)
            proc.wait()
        output.seek(0)
        text = output.read().decode("utf-8", "replace")
    code = 128 - proc.returncode if proc.returncode < 0 else proc.returncode
    return demo.CliResult(("run",), code, text, "", time.monotonic() - started)


def _wait_for_orphans(root: Path, unit_ids: list[str], timeout_s: float = 60.0) -> list[str]:
    """Wait until the commands of ``unit_ids`` that outlived the killed run have ended; the
    units that had to be waited for. A SIGKILL of resume-kit reaches a verify command only
    through its supervisor, which stops the command's group within seconds, and resume-kit
    starts no unit whose command still runs, so resuming at once could refuse the unit the
    kill cut short."""
    from resume_kit.errors import LockError
    from resume_kit.paths import find_layout
    from resume_kit.verify import claim_unit

    layout = find_layout(root)
    deadline = time.monotonic() + timeout_s
    waited: list[str] = []
    for unit_id in unit_ids:
        while True:
            try:
                with claim_unit(layout, unit_id):  # free: nothing of this unit runs any more
                    break
            except LockError as exc:
                if time.monotonic() > deadline:
                    raise ResumeKitError(
                        f"the demo went off script: {exc.message}",
                        hint=f"the workspace is kept in {root}",
                        exit_code=EXIT_OFF_SCRIPT,
                    ) from None
                if unit_id not in waited:
                    waited.append(unit_id)
                time.sleep(0.02)
    return waited


def _killed_run(story: Story) -> None:
    """Start ``resume-kit run``, kill it part way, resume it, and prove nothing ran twice."""
    root = story.root
    done_before = set(_done_ids(root))
    logs_before = _run_logs(root)
    killed = _run_and_kill(root)
    story.show.command(killed)
    passed = [u for u in _done_ids(root) if u not in done_before]
    logs_killed = _run_logs(root)
    cut_short = [u for u in _started_since(logs_before, logs_killed) if u not in passed]
    outlived = _wait_for_orphans(root, cut_short)
    story.show.note(
        (
            f"Killed with SIGKILL after {killed.seconds:.1f} s (exit {killed.code}). "
            if killed.code == 128 + signal.SIGKILL
            else f"It ended by itself (exit {killed.code}) before it could be killed. "
        )
        + f"{len(passed)} units had passed and were checkpointed at once: {_id_list(passed)}."
        + (
            f" {_id_list(cut_short)} {'was' if len(cut_short) == 1 else 'were'} still "
            "running: not marked done."
            if cut_short
            else ""
        )
        + (
            f" The command of {_id_list(outlived)} was still being stopped (resume-kit's "
            "supervisor ends it when resume-kit dies), and resume-kit starts no unit whose "
            "command still runs, so the demo waited for it."
            if outlived
            else ""
        )
    )
    story.show.note("")
    story.cli("run", "--max-units", str(RUN_RESUME_UNITS))
    runs = _run_logs(root)
    resumed = _started_since(logs_killed, runs)
    again = [u for u in passed if runs.get(u, 0) != 1]
    if again or not resumed:
        raise ResumeKitError(
            f"the demo went off script: {_id_list(again)} ran again after passing"
            if again
            else "the demo went off script: the resumed run ran nothing",
            hint=f"this is a bug in resume-kit; the workspace is kept in {root}",
            exit_code=EXIT_OFF_SCRIPT,
        )
    story.show.note(
        f"The resumed run started with {resumed[0]}, the first unit not done. Each of the "
        f"{len(passed)} units that passed before the kill still has exactly one run log in "
        ".resume-kit/runs/: none was run again.",
        good=True,
    )


def run(directory: Path | None) -> int:
    began = time.monotonic()
    if shutil.which("git") is None:
        raise ResumeKitError(
            "git is not installed or not on PATH", hint="install git and try again"
        )
    root, rebuilt = prepare_folder(directory)
    show = presenter()
    quirk = demo.unit_id(demo.QUIRK_DOC)
    show.title(
        "resume-kit demo: an interrupted batch job, resumed",
        [
            f"Folder: {root}" + ("  (an earlier demo here was replaced)" if rebuilt else ""),
            f"Goal of the job: {demo.GOAL}.",
            "Each contract is one unit, proved done by its own command: extract.py writes",
            f"out/NNN.json and check.sh checks it. The batch stopped at contract {demo.QUIRK_DOC};",
            "the session that was fixing it died half way. Every command below is the real",
            "CLI, run in that folder; nothing is simulated.",
        ],
    )
    try:
        with show.working("Building the workspace") as say:
            report = demo.build_workspace(root, say)
    except demo.DemoBuildError as exc:
        raise ResumeKitError(
            f"building the demo failed: {exc}",
            hint=f"this is a bug in resume-kit; the half-built workspace is in {root}",
            exit_code=EXIT_OFF_SCRIPT,
        ) from None
    story = Story(root, show, total_steps=9)

    story.step(
        "what the interrupted session left behind",
        f"Built in {report.seconds:.1f} s with the real CLI: a git repo, 200 contracts, and "
        "a progress file made by `init` and `plan` (so its verify commands are approved on "
        f"this machine). `resume-kit run` verified {report.done} contracts, each by its own "
        f"command, and stopped when {report.failed_unit} failed. Then the session that was "
        "fixing extract.py died half way: the fix is unfinished and out/121-136 are not "
        "committed.",
    )
    show.block("the commands that ran, and the history", "\n".join(_setup_lines(report)))
    show.block("the last batch stopped here", report.failure)

    story.step(
        "resume-kit snapshot",
        "A new session starts knowing nothing. First, record the facts of the workspace: "
        "branch, uncommitted files, and the error lines in logs/extract.log.",
    )
    story.cli("snapshot")

    story.step(
        "resume-kit brief",
        "The fresh-context prompt for the next session (an agent's SessionStart hook prints "
        "the same): the goal, what is verified done, the facts, and exactly one next unit "
        "with the command that proves it.",
    )
    _show_brief(story)

    story.step(
        "resume-kit verify-next",
        f"Run the next unit's verify command. {quirk} still fails (the half-made fix is not "
        "enough), so nothing is marked done and the failure is recorded for the next brief.",
    )
    story.cli("verify-next", expect=1)

    story.step(
        "the fix",
        "Finish what the interrupted session started: read `Counterparty:` as party_b.",
    )
    extract = root / "extract.py"
    before = extract.read_text(encoding="utf-8")
    after = demo.extract_fixed(before)
    extract.write_text(after, encoding="utf-8")
    show.block("the change to extract.py", demo.unified_diff(before, after, "extract.py"), "diff")

    story.step(
        "resume-kit verify-next",
        f"Run it again. It passes, so {quirk} is checkpointed done with evidence: the commit, "
        "whether the tree was dirty, and a fingerprint of its output.",
    )
    story.cli("verify-next")
    show.block(
        f"evidence of {quirk} in .resume-kit/progress.yaml", "\n".join(_evidence_lines(root, quirk))
    )

    story.step(
        "resume-kit run, killed, and resumed",
        "Work through the rest as a batch. Each unit is checkpointed the moment it passes, "
        "so a run killed at any moment continues where it stopped, and nothing that passed "
        "runs again.",
    )
    _killed_run(story)

    story.step(
        "resume-kit brief",
        f"The brief for whoever continues: progress has moved on, {quirk} is done, and the "
        "next unit is the first one not done. logs/extract.log still holds the old KeyError, "
        "so the brief still quotes it, as a fact about that log.",
    )
    _show_brief(story)

    story.step(
        "what to try next",
        f"The demo took {time.monotonic() - began:.0f} s. "
        "The workspace stays; it is yours to explore.",
    )
    show.block(
        "try",
        "\n".join(
            [
                f"cd {shlex.quote(str(root))}",
                "resume-kit status            # every unit, evidence age, warnings",
                "resume-kit brief --format json",
                "resume-kit run               # finish the batch (Ctrl-C stops it cleanly)",
                "git diff extract.py          # the fix, still uncommitted",
                f"resume-kit demo {shlex.quote(str(root))}   # rebuild it from scratch",
            ]
        ),
        "sh",
    )
    return 0
