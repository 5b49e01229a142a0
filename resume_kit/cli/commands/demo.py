"""``resume-kit demo [DIR]``: build an interrupted batch job and walk through resuming it, each
step the real CLI run in the demo repository, as a user would type it, with its real output."""

from __future__ import annotations

import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from textwrap import indent, wrap

from resume_kit.demo import workspace as demo
from resume_kit.infra.errors import EXIT_USAGE, LockError, ResumeKitError

KILL_AFTER = 6  # units the batch run starts before the demo kills it
STORY = """\
resume-kit demo: an interrupted batch job, resumed
Goal of the job: {goal}. Each contract is one unit, proved done by its own command (extract.py
writes out/NNN.json, check.sh checks it). The batch stopped at contract 137 and the session fixing
it died half way. Every command below is the real CLI, run in {root}; nothing is simulated.
Building the workspace: 200 contracts, `init`, `plan` and two `resume-kit run`s …
# what the interrupted session left behind
Built in {seconds:.1f} s: a git repo, 200 contracts, a progress file made by `init` and `plan` (so
its verify commands are approved here). `resume-kit run` verified {done} contracts and stopped
when docs-137 failed; the fix was left half made, out/121-136 uncommitted.
# resume-kit snapshot
A new session starts knowing nothing. First, record the facts: branch, uncommitted files, and the
error lines in logs/extract.log.
# resume-kit brief
The fresh-context prompt an agent's SessionStart hook prints: the goal, what is verified done,
the facts, and exactly one next unit with the command that proves it.
# resume-kit verify-next
Run the next unit's verify command. docs-137 still fails (the half-made fix is not enough): nothing
is marked done, and the failure is recorded for the next brief.
# the fix
Finish what the interrupted session started: read `Counterparty:` as party_b.
# resume-kit verify-next
It passes, so docs-137 is checkpointed done with evidence: the commit, whether the tree was dirty
(the fix is not committed yet), and a fingerprint of its output.
# resume-kit run, killed, and resumed
Each unit is checkpointed the moment it passes, so a batch killed at any moment continues where it
stopped, and nothing that passed runs again.
# resume-kit brief
For whoever continues: progress has moved on, the next unit is the first one not done, and the old
KeyError is still quoted, as a fact of logs/extract.log.
# what to try next
The demo took {took:.0f} s. The workspace stays: `cd {root}`, then try `resume-kit status`, `resume-kit
run` (finishes the batch), `git diff extract.py` (the fix); `resume-kit demo {root}` rebuilds it."""


def prepare_folder(directory: Path | None) -> tuple[Path, bool]:
    """(root, replaced?): no DIR, a temp folder; a new or empty one; an earlier demo, rebuilt."""
    if directory is None:
        return Path(tempfile.mkdtemp(prefix="resume-kit-demo-")).resolve(), False
    path = directory.expanduser().resolve()
    hint = "give a new or empty folder (e.g. `resume-kit demo /tmp/rk-demo`), or no DIR"
    if path.exists() and not path.is_dir():
        raise ResumeKitError(f"{directory} exists and is not a folder", hint, EXIT_USAGE)
    path.mkdir(parents=True, exist_ok=True)
    entries, ours = list(path.iterdir()), (path / ".git" / demo.MARKER_NAME).is_file()
    if entries and not (ours and {e.name for e in entries} <= demo.DEMO_ENTRIES):
        what = "is not empty and is not an earlier demo; nothing was changed"
        raise ResumeKitError(f"{directory} {what}", hint, EXIT_USAGE)
    for entry in entries:
        shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    return path, bool(entries)


def say(text: str = "", prefix: str = "") -> None:
    for line in text.split("\n"):
        sys.stdout.write(f"{prefix}{line}\n" if line else "\n")


def step(number: int, **values: object) -> None:
    """Paragraph ``number`` of the STORY: its title underlined, then why, wrapped."""
    title, why = STORY.split("\n# ")[number].format(**values).split("\n", 1)
    heading = f"Step {number} of {STORY.count(chr(10) + '# ')}: {title}" if number else title
    say(f"\n{heading}\n{'-' * len(heading)}" if number else f"{heading}\n{'=' * len(heading)}")
    say("\n".join(wrap(why, 88, break_on_hyphens=False)) + "\n")


def show(result: demo.CliResult) -> None:
    say(f"$ {result.typed}")
    say("\n".join(s.rstrip("\n") for s in (result.stdout, result.stderr) if s), "  ")
    say(f"  [exit {result.code} · {result.seconds:.1f} s]\n")


def _wait_for_orphans(root: Path, unit_ids: list[str], timeout_s: float = 60.0) -> None:
    """Wait out commands of ``unit_ids`` that outlived a killed run: resume-kit would refuse them."""
    from resume_kit.infra.paths import find_layout
    from resume_kit.runner.verify import claim_unit

    layout, deadline = find_layout(root), time.monotonic() + timeout_s
    for unit_id in unit_ids:
        while True:
            try:
                with claim_unit(layout, unit_id):  # free: nothing of this unit runs any more
                    break
            except LockError as exc:
                if time.monotonic() > deadline:
                    raise demo.off_script(exc.message, root) from None
                time.sleep(0.02)


def _killed_run(root: Path) -> None:
    """``resume-kit run`` SIGKILLed (no clean-up, as by the OOM killer) mid-unit, then resumed."""
    done_before, runs = demo.done_ids(root), root / ".resume-kit" / "runs"  # a log per verify run
    logs_before, started = len(list(runs.glob("*.log"))), time.monotonic()
    with tempfile.TemporaryFile("w+") as output:
        with demo.spawn(root, "run", stdout=output, stderr=subprocess.STDOUT) as proc:
            while proc.poll() is None and len(list(runs.glob("*.log"))) - logs_before <= KILL_AFTER:
                if time.monotonic() > started + 120:  # a run that starts no unit: kill it anyway
                    break
                time.sleep(0.02)
            proc.kill()
        output.seek(0)
        code = 128 - proc.returncode if proc.returncode < 0 else proc.returncode
        killed = demo.CliResult(("run",), code, output.read(), "", time.monotonic() - started)
    show(killed)
    if killed.code != 128 + signal.SIGKILL:
        raise demo.off_script(f"`resume-kit run` ended by itself (exit {killed.code})", root)
    done = demo.done_ids(root)
    passed = [u for u in done if u not in done_before]
    nxt = next(u for n in range(1, demo.DOC_COUNT + 1) if (u := demo.unit_id(n)) not in done)
    cut_short = [nxt] if list(runs.glob(f"{nxt}-*.log")) else []
    _wait_for_orphans(root, cut_short)
    note = f"Killed with SIGKILL after {killed.seconds:.1f} s (exit {killed.code}). {len(passed)}"
    note += f" units had passed and were checkpointed at once: {', '.join(passed)}."
    note += f" {nxt} was still running: not marked done." if cut_short else ""
    say("\n".join(wrap(note, 88)) + "\n")
    show(demo.run_cli(root, "run", "--max-units", "5", merged=True, expect=0))
    say("It started at the first unit not done; none that passed before the kill ran again.\n")


def run(directory: Path | None) -> int:
    began = time.monotonic()
    if shutil.which("git") is None:
        raise ResumeKitError("git is not on PATH", hint="install git, then try again")
    root, rebuilt = prepare_folder(directory)
    quirk = demo.unit_id(demo.QUIRK_DOC)

    def cli(*args: str, expect: int = 0) -> None:
        show(demo.run_cli(root, *args, merged=True, expect=expect))

    step(0, goal=demo.GOAL, root=f"{root}" + (" (an earlier demo was replaced)" * rebuilt))
    report = demo.build_workspace(root)
    step(1, seconds=report.seconds, done=len(demo.done_ids(root)))
    history = [f"$ {r.typed}   # exit {r.code}" for r in report.commands]
    history += ["", "git log --oneline (oldest first):", *(f"  {c}" for c in report.commits)]
    say("the commands that ran, and the history:\n" + indent("\n".join(history), "  "))
    say(f"\nthe last batch stopped here:\n{indent(report.failure, '  ')}")
    step(2)
    cli("snapshot")
    step(3)
    cli("brief")
    step(4)
    cli("verify-next", expect=1)
    step(5)
    extract = root / "extract.py"
    extract.write_text(demo.extract_fixed(extract.read_text(encoding="utf-8")), encoding="utf-8")
    diff = demo.git(root, "diff", "--no-ext-diff", "--no-color", "extract.py")
    say(f"git diff extract.py (the session's half and the fix):\n{indent(diff, '  ')}\n")
    step(6)
    cli("verify-next")
    progress = (root / ".resume-kit" / "progress.yaml").read_text(encoding="utf-8")
    unit = progress.split(f"\n  - id: {quirk}\n", 1)[1].split("\n  - id: ", 1)[0]
    say(f"{quirk} in .resume-kit/progress.yaml:\n  - id: {quirk}\n{unit}\n")
    step(7)
    _killed_run(root)
    step(8)
    cli("brief")
    step(9, took=time.monotonic() - began, root=shlex.quote(str(root)))
    return 0
