"""Reconcile findings (SPEC 5): what the facts say about the claims."""

from __future__ import annotations

from resume_kit.core.light_dataclass import asdict, dataclass
from resume_kit.core.typing_light import Any, Literal

Severity = Literal["error", "warn", "info"]

SEVERITY: dict[str, Severity] = {
    "OPERATION_IN_PROGRESS": "error",
    "CONFLICTS": "error",
    "DONE_BUT_CHANGED": "error",
    "DONE_UNIT_CONFLICT": "error",
    "DONE_ARTIFACT_MISSING": "error",
    "EVIDENCE_NOT_IN_HISTORY": "error",
    "EVIDENCE_NOT_IN_SHALLOW_HISTORY": "info",
    "UNIT_STUCK": "error",
    "DONE_UNVERIFIED": "warn",
    "UNACCOUNTED_CHANGES": "warn",
    "TESTS_FAILING": "warn",
    "LOG_ERRORS": "warn",
    "SIDE_EFFECT_UNKNOWN": "warn",
    "TRANSCRIPT_DISAGREES": "warn",
    "REPEATED_CALLS": "warn",  # the same call failed the same way three times running
    "NO_PROGRESS": "error",  # compactions, sessions or tokens passed with nothing verified
    "PROGRESS_INVALID": "error",
    "SNAPSHOT_NOTE": "info",
}
SEVERITY_ORDER = {"error": 0, "warn": 1, "info": 2}
# The same failure signature this many times running makes a unit stuck (UNIT_STUCK): the
# brief says to change the approach and `run` no longer retries it.
STUCK_REPEATS = 3


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    unit: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def finding(code: str, message: str, unit: str | None = None) -> Finding:
    return Finding(code=code, severity=SEVERITY[code], unit=unit, message=message)
