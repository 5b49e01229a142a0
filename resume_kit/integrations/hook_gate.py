"""Whether a SessionStart/prompt hook's brief is delivered (once per compaction, once per
Copilot session start), and the envelope the answer goes out in: shared by the built hook brief
(``cli/commands/brief_hook.py``) and the served one (``brief/fastpath.py``). Stdlib only."""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds on the served path; mypy reads the guard
if TYPE_CHECKING:
    from resume_kit.core.typing_light import Any


def delivers(hook_input: dict[str, Any], copilot: bool) -> bool:
    """Whether this hook event answers with the brief (and record that it did)."""
    return _copilot_prompt_delivers(hook_input) if copilot else _first_for_compaction(hook_input)


def _first_for_compaction(hook_input: dict[str, Any]) -> bool:
    from resume_kit.infra.cachedir import user_cache_root
    from resume_kit.integrations.compact_once import compaction_event, should_deliver

    event = compaction_event(hook_input)
    session = hook_input.get("session_id")
    if event is None or not isinstance(session, str) or not session:
        return True
    return should_deliver(user_cache_root(), session, event)


def _copilot_prompt_delivers(hook_input: dict[str, Any]) -> bool:
    """Copilot CLI's userPromptSubmitted: the first prompt since the session started, resumed
    or compacted delivers (``prompt_once``); an event with a ``source`` (sessionStart) or a
    ``trigger`` (preCompact) never does."""
    from resume_kit.infra.cachedir import user_cache_root
    from resume_kit.integrations import prompt_once

    if "source" in hook_input or "trigger" in hook_input:
        return False
    session = hook_input.get("session_id")
    if not isinstance(session, str) or not session:
        return True
    stamp = hook_input.get("timestamp")
    return prompt_once.take(user_cache_root(), session, stamp if isinstance(stamp, int) else None)


def for_event(answer: str, hook_input: dict[str, Any], copilot: bool = False) -> str:
    """PostCompact takes no hookSpecificOutput: its plain stdout reaches the model. Copilot CLI
    reads a flat ``{"additionalContext": ...}``."""
    if hook_input.get("hook_event_name") != "PostCompact" and not copilot:
        return answer
    from resume_kit.core.light_json import dumps, loads

    context = str(loads(answer)["hookSpecificOutput"]["additionalContext"])
    if copilot:
        return dumps({"additionalContext": context}) + "\n"
    return context + "\n"
