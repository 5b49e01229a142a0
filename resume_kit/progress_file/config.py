"""config.yaml (SPEC 7): optional settings, validated; unknown keys are an error naming the key.

Two files share one schema: the user's own ``user_config_dir("resume-kit")/config.yaml`` and
the repository's ``.resume-kit/config.yaml``, which arrives with a clone and so may not weaken
anything for the person (docs/security.md): it cannot switch on network use (``summarize:
anthropic``, ``summarize_model`` are the user's alone; a repository key for them is ignored
with a one-line note), its limits are bounded (:data:`REPO_BOUNDS`), and no path in either
file may point outside the work tree.
"""

from __future__ import annotations

import re
from pathlib import Path

from resume_kit.core.activity import Limits
from resume_kit.core.escape import escape_controls
from resume_kit.core.inert import clip
from resume_kit.core.light_dataclass import dataclass, field, replace
from resume_kit.core.typing_light import TYPE_CHECKING, Any
from resume_kit.infra.errors import ConfigError
from resume_kit.infra.paths import Layout

if TYPE_CHECKING:
    # imported where a config names side effects: the brief and verify-next mostly read one
    # that does not, and the module and its shlex cost ~0.8 ms under -X importtime
    from resume_kit.core.side_effects import Pattern

DEFAULT_LOGS = ("*.log", "logs/**/*.log")
TRANSCRIPT_KINDS = ("claude-code", "codex")
SUMMARIZE_MODES = ("off", "anthropic")
DEFAULT_SUMMARIZE_MODEL = "claude-haiku-4-5"
# What a repository's config may set for these, as (lowest, highest): a clone must not keep
# one snapshot only, let a verify command run for days, or flood the agent's context.
REPO_BOUNDS: dict[str, tuple[float, float]] = {
    "keep_snapshots": (5, 200),
    "verify_timeout_s": (1.0, 3600.0),
    "brief_max_tokens": (200, 10_000),
}
# Keys only the user's own config sets (a repository's "summarize: off" is obeyed: it only
# turns the network off).
USER_ONLY = ("summarize", "summarize_model", "side_effect_modes", "no_progress")
_KEY_NAMES = {
    "brief_max_tokens": "brief.max_tokens",
    "verify_timeout_s": "verify.timeout_s",
    "side_effect_modes": "side_effects.on_repeat",
    "no_progress": "no_progress",
}


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
    # side_effects.patterns (the user's, then the repository's: a repository adds, never
    # removes) and side_effects.on_repeat (rule -> ask | deny | warn, "default" for the rest)
    side_effect_patterns: tuple[Pattern, ...] = ()
    side_effect_modes: tuple[tuple[str, str], ...] = ()
    # no_progress: {compactions, sessions, tokens}: the meter's limits (core/activity.Limits)
    no_progress: Limits = field(default_factory=Limits)
    extra: dict[str, Any] = field(default_factory=dict)


def _globs(value: Any, key: str, name: str = "config.yaml") -> tuple[str, ...]:
    if isinstance(value, str):
        globs: tuple[str, ...] = (value,)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        globs = tuple(value)
    else:
        raise ConfigError(f"{name}: {key} must be a list of globs", hint="e.g. logs: ['*.log']")
    return globs


def _inside(globs: tuple[str, ...], key: str, name: str) -> tuple[str, ...]:
    """``globs`` when none obviously leaves the work tree (safefs.escapes)."""
    from resume_kit.infra.safefs import escapes

    for pattern in globs:
        reason = escapes(pattern)
        if reason is not None:
            raise ConfigError(
                f"{name}: {key}: '{_name(pattern)}' {reason}; paths must stay inside the work tree",
                hint="use a path relative to the top of the repository",
            )
    return globs


def _shown(value: Any) -> str:
    """A value for a message: scalars as written (capped), containers by kind only (a YAML
    alias bomb is a few lines of text but billions of items once printed)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return clip(repr(value), 60)
    return f"a {type(value).__name__}"


def _name(key: Any) -> str:
    """A key as written (capped, control characters escaped: the message stays one line);
    anything else as :func:`_shown` describes it."""
    if isinstance(key, str):
        return clip(escape_controls(key), 60)
    return _shown(key)


def _one_key_section(
    values: dict[str, Any],
    field: str,
    value: Any,
    key: str,
    sub: str,
    kind: type[int] | type[float],
    example: int,
    name: str,
) -> None:
    """A mapping section with a single positive setting (``brief: {max_tokens: 800}``), stored
    in ``values[field]`` when given."""
    if not isinstance(value, dict):
        raise ConfigError(f"{name}: {key} must be a mapping ({key}: {{{sub}: {example}}})")
    for given, subval in value.items():
        if given != sub:
            raise ConfigError(
                f"{name}: unknown key '{key}.{_name(given)}'", hint=f"known: {key}.{sub}"
            )
        values[field] = _positive(subval, f"{key}.{sub}", kind, name)


def _positive(value: Any, key: str, kind: type, name: str = "config.yaml") -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{name}: {key} must be a positive number, not {_shown(value)}")
    if kind is int and not isinstance(value, int):
        raise ConfigError(f"{name}: {key} must be a whole number, not {_shown(value)}")
    return kind(value)


def parse(raw: Any) -> Config:
    return Config(**parse_values(raw))


def parse_values(raw: Any, name: str = "config.yaml") -> dict[str, Any]:
    """The validated settings of one file, by :class:`Config` field name."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{name}: the top level must be a mapping")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "logs":
            values["logs"] = _inside(_globs(value, key, name), key, name)
        elif key == "artifacts":
            values["artifacts"] = _inside(_globs(value, key, name), key, name)
        elif key == "keep_snapshots":
            values["keep_snapshots"] = _positive(value, key, int, name)
        elif key == "brief":
            _one_key_section(values, "brief_max_tokens", value, key, "max_tokens", int, 800, name)
        elif key == "verify":
            _one_key_section(values, "verify_timeout_s", value, key, "timeout_s", float, 600, name)
        elif key == "transcripts":
            kinds = _globs(value, key)
            for kind in kinds:
                if kind not in TRANSCRIPT_KINDS:
                    raise ConfigError(
                        f"{name}: unknown transcript kind '{_name(kind)}'",
                        hint=f"known: {', '.join(TRANSCRIPT_KINDS)}",
                    )
            values["transcripts"] = kinds
        elif key == "summarize":
            mode = "off" if value is False else value
            if mode not in SUMMARIZE_MODES:
                raise ConfigError(
                    f"{name}: summarize must be one of {', '.join(SUMMARIZE_MODES)}, not {_shown(value)}"
                )
            values["summarize"] = mode
        elif key == "side_effects":
            _side_effects(values, value, name)
        elif key == "no_progress":
            if not isinstance(value, dict):
                raise ConfigError(
                    f"{name}: no_progress must be a mapping",
                    hint="e.g. no_progress: {compactions: 3, sessions: 4, tokens: 3000000}",
                )
            limits: dict[str, int] = {}
            for sub, item in value.items():
                if sub not in ("compactions", "sessions", "tokens"):
                    raise ConfigError(
                        f"{name}: unknown key 'no_progress.{_name(sub)}'",
                        hint="known: no_progress.compactions, .sessions, .tokens",
                    )
                limits[sub] = _positive(item, f"no_progress.{sub}", int, name)
            values["no_progress"] = Limits(**limits)
        elif key == "summarize_model":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{name}: summarize_model must be a model name")
            values["summarize_model"] = value
        else:
            raise ConfigError(
                f"{name}: unknown key '{_name(key)}'",
                hint="known keys: logs, artifacts, keep_snapshots, brief.max_tokens, "
                "verify.timeout_s, transcripts, summarize, summarize_model, side_effects, no_progress",
            )
    return values


def _mode(value: Any, key: str, name: str) -> str:
    from resume_kit.core.side_effects import MODES

    if value not in MODES:
        raise ConfigError(f"{name}: {key} must be one of {', '.join(MODES)}, not {_shown(value)}")
    return str(value)


def _side_effects(values: dict[str, Any], value: Any, name: str) -> None:
    """``side_effects: {patterns: [GLOB | {pattern, name, on_repeat}], on_repeat: MODE |
    {RULE: MODE}}`` into ``side_effect_patterns`` and ``side_effect_modes``."""
    if not isinstance(value, dict):
        raise ConfigError(
            f"{name}: side_effects must be a mapping",
            hint="e.g. side_effects: {patterns: ['./release.sh*'], on_repeat: ask}",
        )
    for sub, item in value.items():
        if sub == "patterns":
            if not isinstance(item, list):
                raise ConfigError(f"{name}: side_effects.patterns must be a list")
            values["side_effect_patterns"] = tuple(_pattern(p, name) for p in item)
        elif sub == "on_repeat":
            modes = item if isinstance(item, dict) else {"default": item}
            values["side_effect_modes"] = tuple(
                (str(rule), _mode(mode, f"side_effects.on_repeat.{_name(rule)}", name))
                for rule, mode in modes.items()
            )
        else:
            raise ConfigError(
                f"{name}: unknown key 'side_effects.{_name(sub)}'",
                hint="known: side_effects.patterns, side_effects.on_repeat",
            )


def _pattern(raw: Any, name: str) -> Pattern:
    from resume_kit.core.side_effects import Pattern

    if isinstance(raw, str) and raw.strip():
        return Pattern(raw)
    if isinstance(raw, dict) and isinstance(raw.get("pattern"), str) and raw["pattern"].strip():
        unknown = set(raw) - {"pattern", "name", "on_repeat"}
        if unknown:
            raise ConfigError(
                f"{name}: unknown key 'side_effects.patterns.{_name(sorted(map(str, unknown))[0])}'",
                hint="known: pattern, name, on_repeat",
            )
        label = raw.get("name", "custom")
        if not isinstance(label, str) or not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,39}", label):
            raise ConfigError(
                f"{name}: side_effects pattern name {_shown(label)} is not a short id"
            )
        mode = raw.get("on_repeat")
        return Pattern(
            raw["pattern"], label, None if mode is None else _mode(mode, "on_repeat", name)
        )
    raise ConfigError(
        f"{name}: side_effects.patterns: {_shown(raw)} is not a glob or a {{pattern: GLOB}} mapping"
    )


def should_summarize(config: Config, force: bool | None, hook_mode: bool) -> bool:
    """Whether a brief asks for a model-written summary (brief/summarize.py, which the brief
    imports only then). Hook mode never calls the network; ``force`` (--summarize/
    --no-summarize) beats config."""
    if hook_mode:
        return False
    if force is not None:
        return force
    return config.summarize == "anthropic"


MAX_CONFIG_BYTES = 1024 * 1024  # a settings file is a few lines; never parse megabytes of it


def user_config_file() -> Path:
    """The person's own settings: ``user_config_dir("resume-kit")/config.yaml``."""
    from resume_kit.infra.userdirs import user_config_file_text

    return Path(user_config_file_text())


def _read(path: Path, name: str, follow: bool) -> dict[str, Any]:
    """The validated values of the config file at ``path`` ({} when there is none)."""
    from resume_kit.infra.safefs import FileTooLarge, NotARegularFile, read_regular

    try:
        text = read_regular(path, MAX_CONFIG_BYTES, follow=follow).decode("utf-8")
    except FileNotFoundError:
        return {}
    except FileTooLarge as exc:
        raise ConfigError(
            f"{name} is {exc.size} bytes, larger than the {MAX_CONFIG_BYTES // 1024} KiB "
            "a settings file may be",
            hint=f"fix or remove {name}",
        ) from None
    except NotARegularFile as exc:
        raise ConfigError(
            f"{name} is not a regular file ({exc.kind}): {path}",
            hint=f"fix or remove {name}",
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{name}: not UTF-8 text", hint=f"save {name} as UTF-8") from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read {name}: {exc.strerror or exc}", hint=f"fix or remove {name}"
        ) from None
    import yaml  # config is never rewritten by the tool, so the safe loader is enough

    try:
        raw = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(
            f"{name}{where}: not valid YAML ({exc.problem})", hint=f"fix or remove {name}"
        ) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise ConfigError(f"{name}: not valid YAML ({type(exc).__name__})") from None
    return parse_values(raw, name)


def repo_values(values: dict[str, Any], user_file: Path) -> tuple[dict[str, Any], list[str]]:
    """What a repository's config may set of ``values``, and what was changed, for a note."""
    allowed: dict[str, Any] = {}
    ignored: list[str] = []
    changed: list[str] = []
    for key, value in values.items():
        if key in USER_ONLY and not (key == "summarize" and value == "off"):
            ignored.append(_KEY_NAMES.get(key, key))
            continue
        if key in REPO_BOUNDS:
            low, high = REPO_BOUNDS[key]
            bounded = type(value)(min(max(value, low), high))
            if bounded != value:
                changed.append(f"{_KEY_NAMES.get(key, key)} {value} -> {bounded}")
            value = bounded
        allowed[key] = value
    notes: list[str] = []
    if ignored:
        notes.append(f"{', '.join(ignored)} ignored (only your own config can set that)")
    if changed:
        notes.append(f"{', '.join(changed)} (the most a repository may set)")
    if notes:
        notes[-1] += f"; your own config: {user_file}"
    return allowed, notes


_NOTED: set[str] = set()  # one note per process, however often the config is loaded


def load(layout: Layout) -> Config:
    """The user's config, then the repository's over it as far as a repository may go."""
    user_file = user_config_file()
    values = _read(user_file, str(user_file), follow=True)
    repo, notes = repo_values(_read(layout.config, "config.yaml", follow=False), user_file)
    mine: tuple[Pattern, ...] = values.get("side_effect_patterns", ())
    theirs: tuple[Pattern, ...] = repo.pop("side_effect_patterns", ())
    values.update(repo)
    # a repository adds patterns (at the default mode: its on_repeat is not its to set)
    values["side_effect_patterns"] = mine + tuple(replace(p, mode=None) for p in theirs)
    if notes:
        line = f".resume-kit/config.yaml: {'; '.join(notes)}"
        if line not in _NOTED:
            _NOTED.add(line)
            from resume_kit.infra.messages import note

            note(line)
    return Config(**values)
