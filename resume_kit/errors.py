"""User-facing errors and the documented exit codes (SPEC 3)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_VERIFY_FAILED = 1
EXIT_USAGE = 2
EXIT_NOTHING_TO_DO = 3
EXIT_UNTRUSTED = 4
EXIT_TIMEOUT = 124
EXIT_INTERRUPTED = 130


class ResumeKitError(Exception):
    """An error the user can act on: printed as one line plus a hint, never a traceback."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class NotARepositoryError(ResumeKitError):
    pass


class ProgressFileError(ResumeKitError):
    """progress.yaml is missing, unparsable or invalid; it is never overwritten then."""


class ConfigError(ResumeKitError):
    pass


class LockError(ResumeKitError):
    pass


class UntrustedCommandError(ResumeKitError):
    exit_code = EXIT_UNTRUSTED
