"""A workspace whose brief is as big as a hook's budget allows: 300 units (every third of the
first half done with evidence, so many separate done ranges), a unit in progress whose last
failure has a 20-line excerpt, 30 side effects of unknown or failed outcome, 40 untracked files,
long goal, titles and notes.

``style="box"`` puts runs of box-drawing characters and dashes in that text (as a rich
traceback or a table has them): few tokens, many UTF-8 bytes, the worst case for a cap counted
in bytes (Codex) against a budget counted in tokens.
"""

from __future__ import annotations

import json
from pathlib import Path

_WORDS = {
    "english": [
        "port",
        "the",
        "invoice",
        "refund",
        "tax",
        "ledger",
        "payout",
        "handler",
        "to",
        "the",
        "new",
        "billing",
        "api",
        "and",
        "check",
        "totals",
    ],
    "box": [
        "port",
        "the",
        "────────────────────────────────",
        "invoice",
        "refund",
        "════════════════════",
        "tax",
        "ledger",
        "——————————————————",
        "payout",
        "handler",
    ],
}


def _text(words: list[str], n: int, seed: int) -> str:
    return " ".join(words[(seed * 7 + k * 3) % len(words)] for k in range(n))


def _excerpt(style: str, words: list[str]) -> str:
    if style != "box":
        return "\n".join(f"E   {_text(words, 16, k)} (src/h{k}.py:{80 + k})" for k in range(20))
    rule = "─" * 100
    return "\n".join(
        f"╭{rule} Traceback (most recent call last) {rule}╮"
        if k % 2 == 0
        else f"│ src/h{k}.py:{80 + k} in run {'─' * 150} │"
        for k in range(20)
    )


def write_big_progress(root: Path, style: str, marker: str) -> None:
    words = _WORDS[style]

    def quoted(n: int, seed: int) -> str:
        return json.dumps(_text(words, n, seed), ensure_ascii=False)

    goal = json.dumps(f"{marker} {_text(words, 40, 1)}", ensure_ascii=False)
    lines = ["schema_version: 1", f"goal: {goal}", "units:"]
    for i in range(300):
        lines += [f"  - id: unit-{i:03d}", f"    title: {quoted(14, i)}"]
        verify = f'    verify: "pytest -q tests/test_{i}.py"'
        if i == 150:
            lines += [
                "    status: in_progress",
                verify,
                "    last_failure:",
                "      at: '2026-11-29T07:58:00Z'",
                "      exit_code: 1",
                "      signature: sig0150",
                "      repeats: 3",
                f"      excerpt: {json.dumps(_excerpt(style, words), ensure_ascii=False)}",
            ]
        elif i % 3 == 0 and i < 150:
            lines += [
                "    status: done",
                verify,
                "    evidence:",
                "      verified_at: '2026-11-29T08:00:00Z'",
                f"      commit: {'3f2a9c1d' * 5}",
                "      dirty: false",
                f"      fingerprint: sha256:{'ab' * 32}",
                "      duration_s: 1.42",
                f"      log: .resume-kit/runs/unit-{i:03d}-20261129T080000Z.log",
            ]
        else:
            lines += ["    status: " + ("blocked" if i % 7 == 0 else "todo"), verify]
    lines.append("actions:")
    for a in range(30):
        lines += [
            f"  - key: notify-{a}",
            f"    description: {quoted(18, a)}",
            f"    status: {'unknown' if a % 2 else 'failed'}",
            "    at: '2026-11-29T07:30:00Z'",
        ]
    lines.append(f"notes: {quoted(60, 3)}")
    (root / ".resume-kit").mkdir(exist_ok=True)
    (root / ".resume-kit" / "progress.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for f in range(40):
        name = _text(words, 4, f).replace(" ", "_")
        (root / f"{name}_{f}.txt").write_text("x\n", encoding="utf-8")
