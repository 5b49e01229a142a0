"""config.yaml (SPEC 7): optional settings, validated; unknown keys are an error naming the key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from resume_kit.errors import ConfigError
from resume_kit.paths import Layout

DEFAULT_LOGS = ("*.log", "logs/**/*.log")
TRANSCRIPT_KINDS = ("claude-code", "codex")
SUMMARIZE_MODES = ("off", "anthropic")
DEFAULT_SUMMARIZE_MODEL = "claude-haiku-4-5"


@dataclass(frozen=True)
class Config:
    logs: tuple[str, ...] = DEFAULT_LOGS
    artifacts: tuple[str, ...] = ()
    keep_snapshots: int = 20
    brief_max_tokens: int = 1500
    verify_timeout_s: float = 600.0
    transcripts: tuple[str, ...] = TRANSCRIPT_KINDS
    summarize: str = "off"
    summarize_model: str = DEFAULT_SUMMARIZE_MODEL
    extra: dict[str, Any] = field(default_factory=dict)


def _globs(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"config.yaml: {key} must be a list of globs", hint="e.g. logs: ['*.log']")


def _shown(value: Any) -> str:
    """A value for a message: scalars as written (capped), containers by kind only (a YAML
    alias bomb is a few lines of text but billions of items once printed)."""
    if isinstance(value, str | int | float | bool) or value is None:
        text = repr(value)
        return text if len(text) <= 60 else text[:59] + "…"
    return f"a {type(value).__name__}"


def _name(key: Any) -> str:
    """A key as written (capped, control characters escaped: the message stays one line);
    anything else as :func:`_shown` describes it."""
    if isinstance(key, str):
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in key)
        return text if len(text) <= 60 else text[:59] + "…"
    return _shown(key)


def _positive(value: Any, key: str, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"config.yaml: {key} must be a positive number, not {_shown(value)}")
    if kind is int and not isinstance(value, int):
        raise ConfigError(f"config.yaml: {key} must be a whole number, not {_shown(value)}")
    return kind(value)


def parse(raw: Any) -> Config:
    if raw is None:
        return Config()
    if not isinstance(raw, dict):
        raise ConfigError("config.yaml: the top level must be a mapping")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "logs":
            values["logs"] = _globs(value, key)
        elif key == "artifacts":
            values["artifacts"] = _globs(value, key)
        elif key == "keep_snapshots":
            values["keep_snapshots"] = _positive(value, key, int)
        elif key == "brief":
            if not isinstance(value, dict):
                raise ConfigError("config.yaml: brief must be a mapping (brief: {max_tokens: 800})")
            for sub, subval in value.items():
                if sub != "max_tokens":
                    raise ConfigError(
                        f"config.yaml: unknown key 'brief.{_name(sub)}'",
                        hint="known: brief.max_tokens",
                    )
                values["brief_max_tokens"] = _positive(subval, "brief.max_tokens", int)
        elif key == "verify":
            if not isinstance(value, dict):
                raise ConfigError(
                    "config.yaml: verify must be a mapping (verify: {timeout_s: 600})"
                )
            for sub, subval in value.items():
                if sub != "timeout_s":
                    raise ConfigError(
                        f"config.yaml: unknown key 'verify.{_name(sub)}'",
                        hint="known: verify.timeout_s",
                    )
                values["verify_timeout_s"] = _positive(subval, "verify.timeout_s", float)
        elif key == "transcripts":
            kinds = _globs(value, key)
            for kind in kinds:
                if kind not in TRANSCRIPT_KINDS:
                    raise ConfigError(
                        f"config.yaml: unknown transcript kind '{_name(kind)}'",
                        hint=f"known: {', '.join(TRANSCRIPT_KINDS)}",
                    )
            values["transcripts"] = kinds
        elif key == "summarize":
            mode = "off" if value is False else value
            if mode not in SUMMARIZE_MODES:
                raise ConfigError(
                    f"config.yaml: summarize must be one of {', '.join(SUMMARIZE_MODES)}, not {_shown(value)}"
                )
            values["summarize"] = mode
        elif key == "summarize_model":
            if not isinstance(value, str) or not value:
                raise ConfigError("config.yaml: summarize_model must be a model name")
            values["summarize_model"] = value
        else:
            raise ConfigError(
                f"config.yaml: unknown key '{_name(key)}'",
                hint="known keys: logs, artifacts, keep_snapshots, brief.max_tokens, "
                "verify.timeout_s, transcripts, summarize, summarize_model",
            )
    return Config(**values)


MAX_CONFIG_BYTES = 1024 * 1024  # a settings file is a few lines; never parse megabytes of it


def load(layout: Layout) -> Config:
    from resume_kit.store import FileTooLarge, NotARegularFile, read_regular

    path = layout.config
    try:
        text = read_regular(path, MAX_CONFIG_BYTES).decode("utf-8")
    except FileNotFoundError:
        return Config()
    except FileTooLarge as exc:
        raise ConfigError(
            f"config.yaml is {exc.size} bytes, larger than the {MAX_CONFIG_BYTES // 1024} KiB "
            "a settings file may be",
            hint="fix or remove config.yaml",
        ) from None
    except NotARegularFile as exc:
        raise ConfigError(
            f"config.yaml is not a regular file ({exc.kind}): {path}",
            hint="fix or remove config.yaml",
        ) from None
    except UnicodeDecodeError:
        raise ConfigError("config.yaml: not UTF-8 text", hint="save config.yaml as UTF-8") from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read config.yaml: {exc.strerror or exc}", hint="fix or remove config.yaml"
        ) from None
    import yaml  # config is never rewritten by the tool, so the safe loader is enough

    try:
        raw = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(
            f"config.yaml{where}: not valid YAML ({exc.problem})", hint="fix or remove config.yaml"
        ) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise ConfigError(f"config.yaml: not valid YAML ({type(exc).__name__})") from None
    return parse(raw)
