"""The person's own data and config folders (platformdirs' ``user_data_dir`` and
``user_config_dir`` for "resume-kit"), without importing platformdirs where that is certain.

platformdirs costs the brief ~7 ms to import. On Linux every platformdirs version gives
``$XDG_<KIND>_HOME/resume-kit`` for an absolute ``$XDG_<KIND>_HOME``, and ``$HOME/<default>/
resume-kit`` when that variable is empty or unset and ``$HOME`` is absolute; in every other
case (another system, a relative or blank-padded variable, no usable home) platformdirs
answers. Tests check the two agree (tests/adversarial/test_security_readers.py).

The folders are found as text, and pathlib is imported only for the answers given as paths:
the agents' tool hook asks whether the person's config file exists on every shell call, and
pathlib with urllib.parse costs it ~2.5 ms (2026-12-07).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: the tool hook's fast path imports no typing
if TYPE_CHECKING:
    from pathlib import Path

APP = "resume-kit"
CONFIG_FILE = "config.yaml"
_LINUX = {"data": ("XDG_DATA_HOME", ".local/share"), "config": ("XDG_CONFIG_HOME", ".config")}


def _linux_dir(kind: str) -> str | None:
    if not sys.platform.startswith("linux"):
        return None
    variable, default = _LINUX[kind]
    xdg, home = os.environ.get(variable, ""), os.environ.get("HOME", "")
    if xdg.startswith("/") and xdg == xdg.strip():  # some versions strip the value: ask them
        return os.path.join(xdg, APP)
    if xdg == "" and home.startswith("/") and home.rstrip("/") and home == home.strip():
        return os.path.join(home.rstrip("/"), default, APP)
    return None


def _user_dir(kind: str) -> str:
    found = _linux_dir(kind)
    if found is not None:
        return found
    import platformdirs

    ask = platformdirs.user_data_dir if kind == "data" else platformdirs.user_config_dir
    return str(ask(APP, appauthor=False))


def user_data_dir() -> Path:
    """``platformdirs.user_data_dir("resume-kit", appauthor=False)``."""
    from pathlib import Path

    return Path(_user_dir("data"))


def user_config_file_text() -> str:
    """The person's own settings file, ``user_config_dir("resume-kit")/config.yaml``, as text."""
    return os.path.join(_user_dir("config"), CONFIG_FILE)
