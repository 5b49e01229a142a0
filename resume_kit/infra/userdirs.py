"""The person's own data and config folders (platformdirs' ``user_data_dir`` and
``user_config_dir`` for "resume-kit"), without importing platformdirs where that is certain.

platformdirs costs the brief ~7 ms to import. On Linux every platformdirs version gives
``$XDG_<KIND>_HOME/resume-kit`` for an absolute ``$XDG_<KIND>_HOME``, and ``$HOME/<default>/
resume-kit`` when that variable is empty or unset and ``$HOME`` is absolute; in every other
case (another system, a relative or blank-padded variable, no usable home) platformdirs
answers. Tests check the two agree (tests/adversarial/test_security_readers.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "resume-kit"
_LINUX = {"data": ("XDG_DATA_HOME", ".local/share"), "config": ("XDG_CONFIG_HOME", ".config")}


def _linux_dir(kind: str) -> Path | None:
    if not sys.platform.startswith("linux"):
        return None
    variable, default = _LINUX[kind]
    xdg, home = os.environ.get(variable, ""), os.environ.get("HOME", "")
    if xdg.startswith("/") and xdg == xdg.strip():  # some versions strip the value: ask them
        return Path(xdg, APP)
    if xdg == "" and home.startswith("/") and home.rstrip("/") and home == home.strip():
        return Path(home.rstrip("/"), default, APP)
    return None


def user_data_dir() -> Path:
    """``platformdirs.user_data_dir("resume-kit", appauthor=False)``."""
    found = _linux_dir("data")
    if found is not None:
        return found
    from platformdirs import user_data_dir as ask

    return Path(ask(APP, appauthor=False))


def user_config_dir() -> Path:
    """``platformdirs.user_config_dir("resume-kit", appauthor=False)``."""
    found = _linux_dir("config")
    if found is not None:
        return found
    from platformdirs import user_config_dir as ask

    return Path(ask(APP, appauthor=False))
