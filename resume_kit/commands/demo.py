"""``resume-kit demo [DIR]``: build an interrupted batch job and walk through resuming it, each
step the real CLI run in the demo repository, as a user would type it, with its real output."""

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
from collections import Counter
from pathlib import Path

from resume_kit import demo
from resume_kit.errors import EXIT_USAGE, LockError, ResumeKitError

KILL_AFTER = 6  # units the batch run starts before the demo kills it
# The story: a title, then for each step its title and why it is there (wrapped when shown).
STORY = """\
resume-kit demo: an interrupted batch job, resumed
Goal of the job: {goal}. Each contract is one unit, proved done by its own command: extract.py
writes out/NNN.json and check.sh checks it. The batch stopped at contract 137; the session that
was fixing it died half way. Every command below is the real CLI, run in {root}.

what the interrupted session left behind
Built in {seconds:.1f} s with the real CLI: a git repo, 200 contracts, and a progress file made by
`init` and `plan` (so its verify commands are approved on this machine). `resume-kit run` verified
{done} contracts, each by its own command, and stopped when docs-137 failed. Then the session that
was fixing extract.py died half way: the fix is unfinished and out/121-136 are not committed.

resume-kit snapshot
A new session starts knowing nothing. First, record the facts of the workspace: branch,
uncommitted files, and the error lines in logs/extract.log.

resume-kit brief
The fresh-context prompt for the next session (an agent's SessionStart hook prints the same): the
goal, what is verified done, the facts, and exactly one next unit with the command that proves it.

resume-kit verify-next
Run the next unit's verify command. docs-137 still fails (the half-made fix is not enough), so
nothing is marked done and the failure is recorded for the next brief.

the fix
Finish what the interrupted session started: read `Counterparty:` as party_b.

resume-kit verify-next
Run it again. It passes, so docs-137 is checkpointed done with evidence: the commit, whether the
tree was dirty (the fix is not committed yet), and a fingerprint of its output.

resume-kit run, killed, and resumed
Work through the rest as a batch. Each unit is checkpointed the moment it passes, so a run killed
at any moment continues where it stopped, and nothing that passed runs again.

resume-kit brief
The brief for whoever continues: progress has moved on, docs-137 is done, and the next unit is
the first one not done. logs/extract.log still holds the old KeyError, so the brief still quotes
it, as a fact about that log.

what to try next
The demo took {took:.0f} s. The workspace stays; it is yours to explore:"""
TRY = """cd {root}
resume-kit status            # every unit, evidence age, warnings
resume-kit brief --format json
resume-kit run               # finish the batch (Ctrl-C stops it cleanly)
git diff extract.py          # the fix, still uncommitted
resume-kit demo {root}   # rebuild it from scratch"""


def prepare_folder(directory: Path | None) -> tuple[Path, bool]:
    """(the demo's root, whether an earlier demo there was replaced). No ``directory``: a new
    temporary folder. A missing one is created, an empty one used, an earlier demo rebuilt;
    anything else is refused (exit 2), never touched."""
    if directory is None:
        return Path(tempfile.mkdtemp(prefix="resume-kit-demo-")).resolve(), False
    path = directory.expanduser().resolve()
    hint = "give a new or empty folder (e.g. `resume-kit demo /tmp/rk-demo`), or no DIR"
    if path.exists() and not path.is_dir():
        raise ResumeKitError(f"{directory} exists and is not a folder", hint, EXIT_USAGE)
    path.mkdir(parents=True, exist_ok=True)
    entries = list(path.iterdir())
    ours = (path / ".git" / demo.MARKER_NAME).is_file()
    if entries and not (ours and {e.name for e in entries} <= demo.DEMO_ENTRIES):
        message = f"{directory} is not empty and is not an earlier demo; nothing was changed"
        raise ResumeKitError(message, hint, EXIT_USAGE)
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return path, bool(entries)


class Show:
    """Plain text, styled by Rich on a terminal without NO_COLOR (data is never read as markup)."""

    def __init__(self) -> None:
        from resume_kit.ui import colour_allowed, stdout_console

        styled = colour_allowed(sys.stdout) and os.environ.get("TERM", "") != "dumb"
        self.console, self.steps = stdout_console() if styled else None, 0

    def line(self, text: str = "", style: str = "", indent: str = "") -> None:
        for line in text.split("\n"):
            if self.console is None:
                sys.stdout.write(f"{indent}{line}\n" if line else "\n")
            else:
                from rich.text import Text

                self.console.print(Text(f"{indent}{line}" if line else "", style=style))

    def step(self, **values: object) -> None:
        """The next paragraph of the STORY: its title underlined, then why, wrapped."""
        n, self.steps = self.steps, self.steps + 1
        title, why = STORY.split("\n\n")[n].format(**values).split("\n", 1)
        heading = f"Step {n} of {STORY.count(chr(10) * 2)}: {title}" if n else title
        underline = ("-" if n else "=") * len(heading)
        self.line(f"\n{heading}\n{underline}" if n else f"{heading}\n{underline}", "bold cyan")
        self.line("\n".join(textwrap.wrap(why, 88, break_on_hyphens=False)) + "\n", "italic")

    def command(self, result: demo.CliResult) -> None:
        self.line(f"$ {result.typed}", "bold")
        self.line("\n".join(s.rstrip("\n") for s in (result.stdout, result.stderr) if s), "", "  ")
        colour = "green" if result.code == 0 else "red"
        self.line(f"  [exit {result.code} · {result.seconds:.1f} s]\n", colour)


_RUN_LOG = re.compile(r"^(.+)-\d{8}T\d{6,9}Z(?:-\d+)?\.log$")  # <unit>-<UTC stamp>[-n].log


def _run_logs(root: Path) -> Counter[str]:
    """How many verify runs each unit has had (one log per run in .resume-kit/runs/)."""
    names = (_RUN_LOG.match(log.name) for log in (root / ".resume-kit" / "runs").glob("*.log"))
    return Counter(match.group(1) for match in names if match)


def _run_and_kill(root: Path) -> demo.CliResult:
    """``resume-kit run``, SIGKILLed once KILL_AFTER units have started and one more is under
    way (as a closed laptop or the OOM killer would: no clean-up)."""
    logs_before, started = _run_logs(root).total(), time.monotonic()
    with tempfile.TemporaryFile("w+") as output:
        with demo.spawn(root, "run", stdout=output, stderr=subprocess.STDOUT) as proc:
            while proc.poll() is None and time.monotonic() < started + 120:
                if _run_logs(root).total() - logs_before > KILL_AFTER:
                    break
                time.sleep(0.02)
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGKILL)
        output.seek(0)
        code = 128 - proc.returncode if proc.returncode < 0 else proc.returncode
        return demo.CliResult(("run",), code, output.read(), "", time.monotonic() - started)


def _wait_for_orphans(root: Path, unit_ids: list[str], timeout_s: float = 60.0) -> list[str]:
    """Wait until the commands of ``unit_ids`` that outlived the killed run have ended; the
    units that had to be waited for. A SIGKILL of resume-kit does not reach a verify command
    (it runs in its own process group), and resume-kit starts no unit whose command still
    runs, so resuming at once could refuse the unit the kill cut short."""
    from resume_kit.paths import find_layout
    from resume_kit.verify import claim_unit

    layout, deadline, waited = find_layout(root), time.monotonic() + timeout_s, []
    for unit_id in unit_ids:
        while True:
            try:
                with claim_unit(layout, unit_id):  # free: nothing of this unit runs any more
                    break
            except LockError as exc:
                if time.monotonic() > deadline:
                    raise demo.off_script(exc.message, root) from None
                waited += [] if unit_id in waited else [unit_id]
                time.sleep(0.02)
    return waited


def _killed_run(show: Show, root: Path) -> None:
    done_before, logs_before = demo.done_ids(root), _run_logs(root)
    killed = _run_and_kill(root)
    show.command(killed)
    if killed.code != 128 + signal.SIGKILL:
        raise demo.off_script(f"`resume-kit run` ended by itself (exit {killed.code})", root)
    passed = [u for u in demo.done_ids(root) if u not in done_before]
    cut_short = sorted(set(_run_logs(root) - logs_before) - set(passed))
    outlived = ", ".join(_wait_for_orphans(root, cut_short))
    show.line(
        f"Killed with SIGKILL after {killed.seconds:.1f} s (exit {killed.code}). {len(passed)} "
        f"units had passed and were checkpointed at once: {', '.join(passed)}."
        + (f" {', '.join(cut_short)}: still running, not marked done." if cut_short else "")
        + (
            f" Its command outlived the kill (own process group): the demo let {outlived} finish, "
            "as resume-kit starts no unit whose command still runs."
            if outlived
            else ""
        )
    )
    show.command(demo.run_cli(root, "run", "--max-units", "5", merged=True, expect=0))
    show.line(
        "The resumed run started with the first unit not done; none that passed before the "
        "kill ran again (each has one run log in .resume-kit/runs/).\n",
        "green",
    )


def _brief(show: Show, root: Path) -> None:
    result = demo.run_cli(root, "brief", expect=0)
    show.command(result)
    with contextlib.suppress(Exception):  # a nicety: the brief already fit its token budget
        from resume_kit.tokens import count_tokens

        show.line(
            f"{count_tokens(result.stdout)} tokens (cl100k_base): small enough to paste "
            "at the top of any session.\n"
        )


def run(directory: Path | None) -> int:
    began = time.monotonic()
    if shutil.which("git") is None:
        raise ResumeKitError(
            "git is not installed or not on PATH", hint="install git and try again"
        )
    root, rebuilt = prepare_folder(directory)
    show, quirk = Show(), demo.unit_id(demo.QUIRK_DOC)

    def cli(*args: str, expect: int = 0) -> None:
        show.command(demo.run_cli(root, *args, merged=True, expect=expect))

    show.step(
        goal=demo.GOAL,
        root=f"{root}" + (" (an earlier demo there was replaced)" if rebuilt else ""),
    )
    show.line("Building the workspace …")
    report = demo.build_workspace(root, lambda detail: show.line(detail, "dim", "  "))
    show.step(seconds=report.seconds, done=report.done)
    history = [f"$ {r.typed}   # exit {r.code}" for r in report.commands]
    history += ["", "git log --oneline (oldest first):", *(f"  {c}" for c in report.commits)]
    show.line("the commands that ran, and the history:", "bold")
    show.line("\n".join(history) + "\n", "dim", "  ")
    show.line("the last batch stopped here:", "bold")
    show.line(report.failure.rstrip("\n") + "\n", "dim", "  ")
    show.step()
    cli("snapshot")
    show.step()
    _brief(show, root)
    show.step()
    cli("verify-next", expect=1)
    show.step()
    extract = root / "extract.py"
    extract.write_text(demo.extract_fixed(extract.read_text(encoding="utf-8")), encoding="utf-8")
    show.line("git diff extract.py (the interrupted session's half and the fix):", "bold")
    show.line(demo.git(root, "diff", "--no-ext-diff", "--no-color", "extract.py") + "\n", "", "  ")
    show.step()
    cli("verify-next")
    progress = (root / ".resume-kit" / "progress.yaml").read_text(encoding="utf-8")
    unit = progress.split(f"\n  - id: {quirk}\n", 1)[1].split("\n  - id: ", 1)[0]
    show.line(f"{quirk} in .resume-kit/progress.yaml:", "bold")
    show.line(textwrap.dedent(f"  - id: {quirk}\n{unit}") + "\n", "dim", "  ")
    show.step()
    _killed_run(show, root)
    show.step()
    _brief(show, root)
    show.step(took=time.monotonic() - began)
    show.line(TRY.format(root=shlex.quote(str(root))), "", "  ")
    return 0
