"""``resume-kit history search TEXT`` and ``history show ID``: read the state library
(:mod:`resume_kit.facts.history_db`). Every text from the database is printed as data, redacted
and on one line per record."""

from __future__ import annotations

from pathlib import Path

from resume_kit.cli.ui import hint, out, print_json, say
from resume_kit.core.timeutil import from_epoch
from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import EXIT_NOTHING_TO_DO, EXIT_OK


def _endpoint(row: dict[str, Any]) -> dict[str, Any]:
    """The first or last match as the summary shows it."""
    return {
        "id": row["id"],
        "at": from_epoch(row["at"]),
        "unit": row["unit"],
        "commit": row["commit_sha"],
        "root": row["root"],
    }


def _where(record: dict[str, Any]) -> str:
    """``AT (unit U, commit C)``, leaving out what the record does not have."""
    parts = [f"unit {record['unit']}" if record.get("unit") else ""]
    parts.append(f"commit {str(record['commit'])[:10]}" if record.get("commit") else "")
    inside = ", ".join(p for p in parts if p)
    return f"{record['at']} ({inside})" if inside else str(record["at"])


def _line(row: dict[str, Any]) -> str:
    from resume_kit.core.inert import one_line

    passed = {1: " passed", 0: " failed"}.get(row["passed"], "")
    bits = [
        f"#{row['id']}",
        from_epoch(row["at"]),
        f"{row['kind']}{passed}",
        f"unit {row['unit']}" if row["unit"] else "",
        f"commit {row['commit_sha'][:10]}" if row["commit_sha"] else "",
        f"trace {row['trace']}" if row["trace"] else "",
    ]
    head = " ".join(b for b in bits if b)
    return f"{head}: {one_line(row['text'], 160)}"


def _own_db() -> Path:
    from resume_kit.facts.history_place import own_db
    from resume_kit.infra.paths import find_layout

    return own_db(find_layout())


def _passed_later(rows: list[dict[str, Any]]) -> bool:
    """Whether a verify of the unit passed after the last match that was not itself a pass."""
    from resume_kit.facts.history_db import later_pass

    pivot = next((r for r in reversed(rows) if r["passed"] != 1), rows[-1])
    return later_pass(Path(pivot["db"]), pivot["unit"], pivot["at"])


def search(text: str, json_out: bool, all_repos: bool) -> int:
    from resume_kit.facts.history_db import search as find
    from resume_kit.facts.history_db import user_databases

    paths = [_own_db()]
    if all_repos:
        from resume_kit.facts.history_place import other_in_repo_dbs, superseded

        kept = [p for p in user_databases() if not superseded(p)]
        others = [*kept, *other_in_repo_dbs()]
        paths += [p for p in others if p not in paths]
    rows = find(paths, text)
    summary: dict[str, Any] = {"query": text, "matches": len(rows)}
    if rows:
        summary.update(
            first=_endpoint(rows[0]), last=_endpoint(rows[-1]), passed_later=_passed_later(rows)
        )
    if json_out:
        for row in rows:
            row.pop("db", None)
        print_json({**summary, "records": rows})
        return EXIT_OK if rows else EXIT_NOTHING_TO_DO
    if not rows:
        say(f"nothing in the history matches {text!r}")
        hint("--all-repos searches your other work trees too")
        return EXIT_NOTHING_TO_DO
    records = "1 record" if len(rows) == 1 else f"{len(rows)} records"
    out(
        f"{records}; first {_where(summary['first'])}, last {_where(summary['last'])}; "
        + ("a later verify passed" if summary["passed_later"] else "no later verify passed")
    )
    for row in rows:
        out(("" if not all_repos else f"[{row['root']}] ") + _line(row))
    return EXIT_OK


def show(ident: str, json_out: bool) -> int:
    from resume_kit.facts.history_db import unit_records
    from resume_kit.infra.paths import find_layout

    layout = find_layout()
    rows = unit_records(_own_db(), ident)
    is_unit = any(r["unit"] == ident for r in rows)
    logs = [] if is_unit else _run_logs(layout, ident)
    receipt = None if is_unit else _drill_receipt(layout, ident)
    found = bool(rows or logs or receipt)
    if json_out:
        print_json(
            {
                "id": ident,
                "records": rows,
                "run_logs": [{"log": log, "unit": unit, "started": at} for log, unit, at in logs],
                "drill_receipt": receipt,
            }
        )
    elif not found:
        say(f"no record of unit or trace {ident!r} in this work tree's history")
    else:
        for row in rows:
            out(_line(row))
        for log, unit, at in logs:
            out(f"run log {log}: unit {unit}, started {at}")
        if receipt is not None:
            out(f"drill receipt {receipt}")
    return EXIT_OK if found else EXIT_NOTHING_TO_DO


def _run_logs(layout: Any, trace: str) -> list[tuple[str, str, str]]:
    from resume_kit.runner.verify import logs_of_trace

    return logs_of_trace(layout, trace)


def _drill_receipt(layout: Any, trace: str) -> str | None:
    """The drill receipt of trace ``trace`` in the user's data directory (receipts in
    ``.resume-kit/drills/`` arrive with a clone and are never read back)."""
    from resume_kit.cli.commands.drill import receipt_dir

    if not trace.isalnum():
        return None
    try:
        path = receipt_dir(layout, False) / f"{trace}.json"
        return str(path) if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def keep(where: str | None) -> int:
    """``history keep [in-repo|user-data]``: where the history is kept; changing it is a
    person's choice (a terminal), never an agent's nor the repository's."""
    from resume_kit.cli.approval import person_at_terminal
    from resume_kit.facts import history_place
    from resume_kit.infra.errors import ResumeKitError, UntrustedCommandError
    from resume_kit.infra.paths import find_layout

    layout = find_layout()
    if where is None:
        now, path = history_place.place(layout), history_place.own_db(layout)
        out(f"{now}: {layout.rel(path) if now == history_place.IN_REPO else path}")
        return EXIT_OK
    if where not in history_place.PLACES:
        raise ResumeKitError(f"unknown place {where!r}", hint="use in-repo or user-data")
    if not person_at_terminal():
        raise UntrustedCommandError(
            "not changed: where the history is kept is a person's choice, and no terminal is "
            "typing this command",
            hint=f"run `resume-kit history keep {where}` yourself in a terminal, or set "
            f"RESUME_KIT_HISTORY={where} in your own shell",
        )
    for line in history_place.keep(layout, where):
        say(line)
    return EXIT_OK
