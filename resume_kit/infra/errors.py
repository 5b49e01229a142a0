"""User-facing errors and the documented exit codes (SPEC 3)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_VERIFY_FAILED = 1
EXIT_USAGE = 2
EXIT_NOTHING_TO_DO = 3
EXIT_UNTRUSTED = 4
EXIT_LEASED = 5  # the unit is leased by someone else (claim, verify-next --unit)
EXIT_INTERNAL = 70  # a bug: resume_kit.cli.crash writes a crash log
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


class NotAFileTargetError(ResumeKitError, OSError):
    """A write's target is a device, FIFO, socket or folder: one line for the person, and still
    an OSError for the hooks and caches that carry on when a write fails."""

    def __init__(self, message: str, hint: str | None = None):
        ResumeKitError.__init__(self, message, hint)


class UntrustedCommandError(ResumeKitError):
    exit_code = EXIT_UNTRUSTED


# Errors of the machine rather than of resume-kit: a full disk, a read-only mount, missing
# permissions, a symlink loop. They are reported like user errors (one line, exit 2).
_ENVIRONMENT_ERRNOS = {
    "ENOSPC": "free some disk space and run the command again",
    "EDQUOT": "free some space in your quota and run the command again",
    "EROFS": "the folder is on a read-only file system: run resume-kit where it can write",
    "EACCES": "check the permissions of the repository and of .resume-kit/",
    "EPERM": "check the permissions of the repository and of .resume-kit/",
    "EIO": "the disk reported an I/O error: check it, then run the command again",
    "EMFILE": "too many open files: raise the limit (ulimit -n) or close other programs",
    "ENFILE": "too many open files on this machine: close other programs",
    "ELOOP": "a symbolic link points back at itself: fix or remove it",
    "ENOTDIR": "a file stands where a folder is expected: move it away",
    "EISDIR": "a folder stands where a file is expected: move it away",
}


def environment_error(exc: BaseException) -> ResumeKitError | None:
    """The one-line error for an OSError the machine caused, or None (then it is a bug)."""
    import errno

    if not isinstance(exc, OSError) or exc.errno is None:
        return None
    hint = _ENVIRONMENT_ERRNOS.get(errno.errorcode.get(exc.errno, ""))
    if hint is None:
        return None
    what = exc.strerror or str(exc)
    where = exc.filename if exc.filename is not None else None
    message = f"{what}: {where}" if where else what
    return ResumeKitError(
        message + " (files are written atomically: nothing was half-written)"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO)
        else message,
        hint=hint,
    )
