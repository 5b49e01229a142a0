"""The YAML round trip of a progress file.

The file is parsed with ruamel.yaml's round-trip loader so that a person's comments, key order
and quoting survive: the typed model is derived from the parsed document, and saving merges the
model back into that document, touching only the values that changed.
"""

from __future__ import annotations

import io
import re

from resume_kit.core.typing_light import Any
from resume_kit.infra.errors import ProgressFileError
from resume_kit.model.progress import Action, Progress, Unit
from resume_kit.progress_file.validate import plain_value


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.allow_duplicate_keys = False
    return yaml


def detect_indent(text: str) -> tuple[int, int]:
    """(sequence indent, dash offset) as the person wrote the units list; SPEC style by default."""
    match = re.search(r"^[A-Za-z_]+:[ \t]*\n(?:[ \t]*#.*\n)*( *)- ", text, re.MULTILINE)
    if match:
        offset = len(match.group(1))
        return offset + 2, offset
    return 4, 2


def load_quietly(yaml: Any, text: str) -> Any:
    """``yaml.load(text)`` with ruamel's warnings (a reused anchor) kept off stderr: they quote
    the file's text raw, over several lines, before resume-kit's own one-line error."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return yaml.load(text)


def parse_text(text: str, name: str = "progress.yaml") -> Any:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return load_quietly(_yaml(), text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        reason = (exc.problem or exc.context or "invalid YAML").strip()
        raise ProgressFileError(
            f"{name}{line}: not valid YAML ({reason})",
            hint="fix the file by hand; resume-kit never overwrites a file it cannot read",
        ) from None
    except (YAMLError, RecursionError, ValueError, TypeError) as exc:
        raise ProgressFileError(
            f"{name}: not valid YAML ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
            hint="fix the file by hand; resume-kit never overwrites a file it cannot read",
        ) from None


def _as_yaml_value(value: Any) -> Any:
    from ruamel.yaml.scalarstring import LiteralScalarString

    if isinstance(value, str) and "\n" in value:
        lines = value.split("\n")
        # A literal block only where it reads back byte for byte; otherwise a quoted string.
        if all(line.isprintable() and line == line.rstrip() for line in lines) and lines[0]:
            return LiteralScalarString(value)
    return value


def action_data(action: Action) -> dict[str, Any]:
    """A ledger entry as plain data: unset fields left out, attempts only when kept."""
    data: dict[str, Any] = {"key": action.key, "description": action.description}
    data["status"] = action.status
    if action.at is not None:
        data["at"] = action.at
    if action.attempts:
        data["attempts"] = [
            {k: v for k, v in vars(attempt).items() if v is not None} for attempt in action.attempts
        ]
    return data


def unit_data(unit: Unit) -> dict[str, Any]:
    """The plain data one unit writes (see :func:`to_data`)."""
    data: dict[str, Any] = {"id": unit.id, "title": unit.title, "status": unit.status}
    if unit.verify is not None:
        data["verify"] = unit.verify
    for key in ("files", "artifacts", "after"):
        if getattr(unit, key):
            data[key] = list(getattr(unit, key))
    if unit.parallel:
        data["parallel"] = True
    if unit.side_effects:
        data["side_effects"] = True
    for key in ("group", "notes", "blocked_reason"):
        if getattr(unit, key) is not None:
            data[key] = getattr(unit, key)
    if unit.evidence is not None:
        ev = unit.evidence
        data["evidence"] = {
            "verified_at": ev.verified_at,
            "commit": ev.commit,
            "dirty": ev.dirty,
            "fingerprint": ev.fingerprint,
            "duration_s": ev.duration_s,
        }
        if ev.log is not None:
            data["evidence"]["log"] = ev.log
    if unit.last_failure is not None:
        lf = unit.last_failure
        data["last_failure"] = {
            "at": lf.at,
            "exit_code": lf.exit_code,
            "signature": lf.signature,
            "repeats": lf.repeats,
            "excerpt": lf.excerpt,
        }
        if lf.state is not None:
            data["last_failure"]["state"] = lf.state
        if lf.reruns:
            data["last_failure"]["reruns"] = lf.reruns
    return data


def to_data(progress: Progress) -> dict[str, Any]:
    """The plain data a Progress writes, in SPEC key order, empty optional keys left out."""
    data: dict[str, Any] = {
        "schema_version": progress.schema_version,
        "goal": progress.goal,
        "units": [unit_data(u) for u in progress.units],
    }
    if progress.actions:
        data["actions"] = [action_data(a) for a in progress.actions]
    if progress.notes is not None:
        data["notes"] = progress.notes
    return data


def _same(old: Any, new: Any) -> bool:
    """Whether a parsed value already holds ``new`` (so the node, and its comments, stay)."""
    old = plain_value(old)
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool) and old == new
    if isinstance(new, str):
        return isinstance(old, str) and str(old) == new
    if isinstance(new, int | float):
        return isinstance(old, int | float) and old == new
    return bool(old == new)


def merge_into(raw: Any, data: Any) -> Any:
    """Update the round-trip node ``raw`` to hold ``data``, keeping what did not change.

    Mappings are updated key by key (new keys appended, vanished keys removed); lists of
    mappings with ``id``/``key`` are matched by that identity. Anything else is replaced.
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(data, dict):
        if not isinstance(raw, CommentedMap):
            fresh = CommentedMap()
            for key, value in data.items():
                fresh[key] = merge_into(None, value)
            return fresh
        for key in [k for k in raw if k not in data]:
            _delete_keeping_comments(raw, key)
        for key, value in data.items():
            if key in raw:
                merged = merge_into(raw[key], value)
                if merged is not raw[key]:
                    raw[key] = merged
            else:
                raw[key] = merge_into(None, value)
        return raw
    if isinstance(data, list):
        if not isinstance(raw, CommentedSeq):
            fresh_seq = CommentedSeq()
            for value in data:
                fresh_seq.append(merge_into(None, value))
            return fresh_seq
        ident = identity_key(data)
        if ident is not None and all(isinstance(item, dict) for item in raw):
            old_ids = [item.get(ident) for item in raw]
            new_ids = [item[ident] for item in data]
            if new_ids[: len(old_ids)] == old_ids:
                for item, value in zip(raw, data, strict=False):
                    merge_into(item, value)
                for value in data[len(old_ids) :]:
                    raw.append(merge_into(None, value))
                return raw
            by_id = {item.get(ident): item for item in raw}
            rebuilt = CommentedSeq()
            for value in data:
                rebuilt.append(merge_into(by_id.get(value[ident]), value))
            return rebuilt
        if len(raw) == len(data) and all(_same(a, b) for a, b in zip(raw, data, strict=True)):
            return raw
        fresh_seq = CommentedSeq()
        if raw.fa.flow_style():
            fresh_seq.fa.set_flow_style()
        for value in data:
            fresh_seq.append(merge_into(None, value))
        return fresh_seq
    if raw is not None and _same(raw, data):
        return raw
    return _as_yaml_value(data)


def _take_trailing_comment(node: Any) -> Any:
    """Detach the comment that follows the last value inside ``node`` (None when there is none).

    ruamel.yaml stores a comment line that precedes the next key or list item on the last
    value before it, so deleting that value would delete a person's comment with it.
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap) and node:
        last = list(node.keys())[-1]
        slot = node.ca.items.get(last)
        if slot and len(slot) > 2 and slot[2] is not None:
            token, slot[2] = slot[2], None
            return token
        return _take_trailing_comment(node[last])
    if isinstance(node, CommentedSeq) and node:
        slot = node.ca.items.get(len(node) - 1)
        if slot and slot[0] is not None:
            token, slot[0] = slot[0], None
            return token
        return _take_trailing_comment(node[-1])
    return None


def _attach_trailing_comment(node: Any, key: Any, token: Any) -> None:
    """Put ``token`` after the value of ``node[key]`` (descending into nested blocks)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    value = node[key]
    if isinstance(value, CommentedMap) and value:
        _attach_trailing_comment(value, list(value.keys())[-1], token)
    elif isinstance(value, CommentedSeq) and value:
        if isinstance(value[-1], CommentedMap | CommentedSeq) and value[-1]:
            inner = value[-1]
            _attach_trailing_comment(
                inner,
                list(inner.keys())[-1] if isinstance(inner, CommentedMap) else len(inner) - 1,
                token,
            )
        elif isinstance(node, CommentedSeq):
            node.ca.items.setdefault(key, [None, None])[0] = token
        else:
            value.ca.items.setdefault(len(value) - 1, [None, None])[0] = token
    elif isinstance(node, CommentedMap):
        slot = node.ca.items.setdefault(key, [None, None, None, None])
        if slot[2] is None:
            slot[2] = token
    else:
        slot = node.ca.items.setdefault(key, [None, None])
        if slot[0] is None:
            slot[0] = token


def _delete_keeping_comments(mapping: Any, key: Any) -> None:
    keys = list(mapping.keys())
    position = keys.index(key)
    token = None
    slot = mapping.ca.items.get(key)
    if slot and len(slot) > 2 and slot[2] is not None:
        token = slot[2]
    else:
        token = _take_trailing_comment(mapping[key])
    del mapping[key]
    if token is not None and position > 0:
        _attach_trailing_comment(mapping, keys[position - 1], token)


def identity_key(items: list[Any]) -> str | None:
    """The key a merge matches this list's mappings by (``id``, else ``key``); None: the
    list is not matched item by item."""
    for key in ("id", "key"):
        if items and all(isinstance(i, dict) and key in i for i in items):
            return key
    return None


def dump(raw: Any, indent: tuple[int, int] = (4, 2)) -> str:
    yaml = _yaml()
    yaml.indent(mapping=2, sequence=indent[0], offset=indent[1])
    buffer = io.StringIO()
    yaml.dump(raw, buffer)
    return buffer.getvalue()


def new_document(progress: Progress) -> Any:
    return merge_into(None, to_data(progress))
