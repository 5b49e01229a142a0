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


def _positive(value: Any, key: str, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"config.yaml: {key} must be a positive number, not {value!r}")
    if kind is int and not isinstance(value, int):
        raise ConfigError(f"config.yaml: {key} must be a whole number, not {value!r}")
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
                        f"config.yaml: unknown key 'brief.{sub}'", hint="known: brief.max_tokens"
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
                        f"config.yaml: unknown key 'verify.{sub}'", hint="known: verify.timeout_s"
                    )
                values["verify_timeout_s"] = _positive(subval, "verify.timeout_s", float)
        elif key == "transcripts":
            kinds = _globs(value, key)
            for kind in kinds:
                if kind not in TRANSCRIPT_KINDS:
                    raise ConfigError(
                        f"config.yaml: unknown transcript kind '{kind}'",
                        hint=f"known: {', '.join(TRANSCRIPT_KINDS)}",
                    )
            values["transcripts"] = kinds
        elif key == "summarize":
            mode = "off" if value is False else value
            if mode not in SUMMARIZE_MODES:
                raise ConfigError(
                    f"config.yaml: summarize must be one of {', '.join(SUMMARIZE_MODES)}, not {value!r}"
                )
            values["summarize"] = mode
        elif key == "summarize_model":
            if not isinstance(value, str) or not value:
                raise ConfigError("config.yaml: summarize_model must be a model name")
            values["summarize_model"] = value
        else:
            raise ConfigError(
                f"config.yaml: unknown key '{key}'",
                hint="known keys: logs, artifacts, keep_snapshots, brief.max_tokens, "
                "verify.timeout_s, transcripts, summarize, summarize_model",
            )
    return Config(**values)


def load(layout: Layout) -> Config:
    path = layout.config
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", hint="fix or remove config.yaml") from None
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
