"""The agents' before/after tool hooks: ``python -I cli/isolated_entry.py hook-tool pre|post
[--agent claude|codex|gemini|cursor|copilot]`` (or ``resume-kit hook-tool …``).

Before a shell (or writing MCP) call that is a known side effect (core/side_effects), the ledger
is read: a key that already succeeded, or whose last attempt's outcome is unknown, gets the
agent's "ask" answer (or deny / warn, per the user's config) with the reason; otherwise an
``unknown`` attempt is recorded, so a call with no after-event stays unknown. After the call,
the attempt gets its outcome from the tool result. A call that is no side effect is left alone
without reading anything but stdin, and so is any repository without a progress file.

It runs on every shell call, so the path to "not a side effect" imports only the standard
library and core/side_effects (no typer, rich or YAML). It fails open: anything wrong is one
line on stderr and exit status 0, never a blocked agent.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

from resume_kit.core.light_dataclass import dataclass
from resume_kit.core.light_json import dumps, loads
from resume_kit.core.side_effects import Match, Pattern, classify, classify_tool
from resume_kit.core.typing_light import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resume_kit.core.guard import Decision
    from resume_kit.infra.paths import Layout
    from resume_kit.model.progress import ActionStatus, Attempt

AGENTS = ("claude", "codex", "gemini", "cursor", "copilot")
# The shell tool's name per agent (Claude Code and Codex: Bash; Gemini CLI: run_shell_command;
# Copilot CLI: bash); Cursor's shell events carry the command at the top level.
SHELL_TOOLS = frozenset({"Bash", "run_shell_command", "bash"})
# Copilot CLI 1.0.102 reports a shell call that exited non-zero as resultType "success": the exit
# status is only in the line it appends to the output (the last line, after anything printed).
_COPILOT_EXIT = re.compile(r"<shellId: [^<>\n]{1,64} completed with exit code (\d{1,3})>\s*\Z")
_RANK = {"warn": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True)
class Call:
    phase: str  # pre | post
    agent: str
    command: str | None  # the shell command line
    tool: str  # the tool's name
    tool_input: Any
    call_id: str | None
    session: str | None
    cwd: str | None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value and "\x00" not in value else None


def from_copilot(data: dict[str, Any]) -> dict[str, Any]:
    """Copilot CLI's camelCase payload (``toolName``, ``toolArgs``: an object, or a JSON string
    holding one, ``toolResult``, ``sessionId``) in the snake_case keys the rest reads."""
    args = data.get("toolArgs")
    if isinstance(args, str):
        try:
            args = loads(args)
        except ValueError:
            args = None
    result = data.get("toolResult")
    text = result.get("textResultForLlm") if isinstance(result, dict) else None
    return {
        "tool_name": data.get("toolName"),
        "tool_input": args,
        "tool_response": result,
        "session_id": data.get("sessionId"),
        "cwd": data.get("cwd"),
        **({"error": text} if isinstance(text, str) else {}),
    }


def _copilot_outcome(response: Any) -> tuple[ActionStatus, str | None]:
    if not isinstance(response, dict):
        return "unknown", "copilot reports no result"
    kind = _text(response.get("resultType"))
    text = response.get("textResultForLlm")
    found = _COPILOT_EXIT.search(text) if isinstance(text, str) else None
    if kind == "success" and found:
        code = int(found[1])
        return ("success" if code == 0 else "failed"), f"exit {code}"
    if kind == "success":
        return "success", "success"
    if kind in ("failure", "denied"):  # a denied call did not run: it may be tried again
        return "failed", kind
    return "unknown", f"copilot result {kind or 'missing'}"


def parse_call(phase: str, agent: str, data: dict[str, Any]) -> Call | None:
    """The tool call a hook payload describes; None for a payload that is not one."""
    tool_input = data.get("tool_input")
    if agent == "cursor":  # beforeShellExecution / afterShellExecution, beforeMCPExecution
        tool = _text(data.get("tool_name")) or "shell"
        command = _text(data.get("command")) if tool == "shell" else None
    else:
        tool = _text(data.get("tool_name")) or ""
        command = None
        if tool in SHELL_TOOLS and isinstance(tool_input, dict):
            command = _text(tool_input.get("command"))
    if command is None and not tool.startswith("mcp_"):
        return None
    return Call(
        phase=phase,
        agent=agent,
        command=command,
        tool=tool,
        tool_input=tool_input,
        call_id=_text(data.get("tool_use_id")),
        session=_text(data.get("session_id")) or _text(data.get("conversation_id")),
        cwd=_text(data.get("cwd")),
    )


def outcome(agent: str, data: dict[str, Any]) -> tuple[ActionStatus, str | None]:
    """(status, result) of a finished call from its after-event."""
    response = data.get("tool_response")
    if agent == "copilot":
        return _copilot_outcome(response)
    for holder in (data, response if isinstance(response, dict) else {}):
        for name in ("exit_code", "exitCode"):
            code = holder.get(name)
            if isinstance(code, int) and not isinstance(code, bool):
                return ("success" if code == 0 else "failed"), f"exit {code}"
    event = data.get("hook_event_name")
    if agent == "claude":
        if event == "PostToolUseFailure":
            if data.get("is_interrupt") is True:
                return "unknown", "interrupted"
            return "failed", _text(data.get("error")) or "failed"
        if isinstance(response, dict) and response.get("interrupted") is True:
            return "unknown", "interrupted"
        return "success", "exit 0"
    if agent == "gemini":
        error = response.get("error") if isinstance(response, dict) else None
        if error:
            return "failed", str(error.get("message", error) if isinstance(error, dict) else error)
        return "success", "no error"
    # Codex 0.171 passes the output only, Cursor the output and duration: no exit status
    return "unknown", f"{agent} reports no exit status"


def work_tree(cwd: str | None) -> str | None:
    """The work tree above ``cwd`` that has a progress file, else None (stat calls only)."""
    folder = os.path.abspath(cwd or os.getcwd())
    for _ in range(64):
        if os.path.lexists(os.path.join(folder, ".git")):
            progress = os.path.join(folder, ".resume-kit", "progress.yaml")
            return folder if os.path.lexists(progress) else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _config(root: str) -> tuple[Layout | None, tuple[Pattern, ...], tuple[tuple[str, str], ...]]:
    """The layout (when a config file made it needed), the patterns and the modes."""
    if not _configured(root):
        return None, (), ()
    from resume_kit.infra.errors import ResumeKitError
    from resume_kit.infra.paths import find_layout
    from resume_kit.progress_file import config as config_file

    layout = find_layout(_path(root))
    try:
        loaded = config_file.load(layout)
    except ResumeKitError as exc:  # the built-in rules still apply
        _say(f"tool hook: config not read ({exc.message.splitlines()[0]}); built-in rules only")
        return layout, (), ()
    return layout, loaded.side_effect_patterns, loaded.side_effect_modes


def _path(root: str) -> Any:
    from pathlib import Path

    return Path(root)


def matches(call: Call, patterns: Sequence[Pattern]) -> list[Match]:
    if call.command is not None:
        return classify(call.command, patterns)
    found = classify_tool(call.tool, call.tool_input)
    return [found] if found is not None else []


def handle(phase: str, agent: str, data: dict[str, Any]) -> str | None:
    """The hook's stdout for ``data`` (None: nothing to say), recording what it must."""
    if agent == "copilot":
        data = from_copilot(data)
    root = work_tree(_text(data.get("cwd")))
    if root is None:
        return None
    loop = _loop_guard(phase, agent, data, root)
    if loop is not None:
        return answer(agent, loop)  # the fourth identical failing call: before anything else
    call = parse_call(phase, agent, data)
    if call is None:
        return None
    if not matches(call, ()) and not _configured(root):
        return None  # the fast path: no built-in rule matched and no pattern could
    layout, patterns, modes = _config(root)
    found = matches(call, patterns)
    if not found:
        return None
    if layout is None:
        from resume_kit.infra.paths import find_layout

        layout = find_layout(_path(root))
    if phase == "pre":
        return _before(call, layout, found, modes)
    _after(call, layout, found, data)
    return None


def _identity(agent: str, data: dict[str, Any]) -> tuple[str, Any] | None:
    """Any tool call's name and arguments (the loop guard looks at every tool)."""
    if agent == "cursor" and _text(data.get("command")):
        return "shell", {"command": data["command"]}
    tool = _text(data.get("tool_name"))
    return None if tool is None else (tool, data.get("tool_input"))


def _loop_guard(phase: str, agent: str, data: dict[str, Any], root: str) -> Decision | None:
    """After a call: add it to the activity log. Before one: "ask" when the same call already
    failed :data:`~resume_kit.core.activity.REPEATS` times in a row, the same way each time."""
    from resume_kit.core.activity import call_signature, describe_loop, repeated
    from resume_kit.facts import activity_log

    identity = _identity(agent, data)
    if identity is None:
        return None
    session = _text(data.get("session_id")) or _text(data.get("conversation_id"))
    sig = call_signature(*identity)
    if phase == "pre":
        loop = repeated(activity_log.calls(root), session, sig)
        if not loop:
            return None
        from resume_kit.core.guard import Decision
        from resume_kit.core.inert import one_line

        return Decision(
            "ask",
            f"resume-kit's loop guard: {one_line(describe_loop(loop), 600)}. A fourth identical "
            "try will fail the same way: change the approach, or stop and report to the person.",
        )
    _record_call(agent, data, root, session, sig, identity)
    return None


def _record_call(
    agent: str,
    data: dict[str, Any],
    root: str,
    session: str | None,
    sig: str,
    identity: tuple[str, Any],
) -> None:
    from resume_kit.core.activity import CallRecord, result_signature
    from resume_kit.core.clock import now_utc
    from resume_kit.core.inert import clip
    from resume_kit.facts import activity_log
    from resume_kit.infra.redact import redact

    status, result = outcome(agent, data)
    failed = status == "failed"
    error = ""
    if failed:
        response = data.get("tool_response")
        error = _text(data.get("error")) or (result or "")
        if agent == "gemini" and isinstance(response, dict):
            error = str(response.get("error") or error)
    tool, tool_input = identity
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    shown = command if isinstance(command, str) else tool
    first = next((line for line in error.splitlines() if line.strip()), "")
    activity_log.add_call(
        root,
        CallRecord(
            session=session,
            sig=sig,
            failed=failed,
            result=result_signature(redact(error)) if failed else "",
            shown=clip(" ".join(redact(shown).split()), 160),
            error=clip(" ".join(redact(first).split()), 160),
            at=now_utc(),
        ),
    )


def _configured(root: str) -> bool:
    """Whether a config file could add patterns (checked without loading the config module)."""
    from resume_kit.infra.userdirs import user_config_file_text

    repo_config = os.path.join(root, ".resume-kit", "config.yaml")
    return os.path.lexists(repo_config) or os.path.exists(user_config_file_text())


def _keyed(found: Sequence[Match]) -> list[tuple[Match, str]]:
    from resume_kit.infra.redact import redact

    return [(m, m.key(redact)) for m in found]


def _before(
    call: Call, layout: Layout, found: Sequence[Match], modes: Sequence[tuple[str, str]]
) -> str | None:
    from resume_kit.core.guard import mode_for, repeat_decision
    from resume_kit.core.timeutil import parse_utc
    from resume_kit.model.progress import now_iso
    from resume_kit.progress_file import io as progress_io
    from resume_kit.progress_file import ledger

    at = now_iso()
    now = parse_utc(at)
    assert now is not None
    entries = {a.key: a for a in progress_io.load(layout).progress.actions}
    keyed = _keyed(found)
    decisions = [
        d
        for m, key in keyed
        if (d := repeat_decision(m, key, entries.get(key), mode_for(m, modes), now)) is not None
    ]
    strongest = max(decisions, key=lambda d: _RANK.get(d.mode, 1), default=None)
    if strongest is not None and strongest.mode != "warn":
        return answer(call.agent, strongest)  # if it runs after all, the after-event records it
    for match, key in keyed:
        ledger.record(layout, key, _attempt(call, match, "unknown", None, at), _about(match))
    if strongest is not None:
        from resume_kit.infra.messages import warning

        warning(strongest.reason)
        return answer(call.agent, strongest)
    return None


def _about(match: Match) -> str:
    from resume_kit.core.inert import clip
    from resume_kit.infra.redact import redact

    return clip(f"{match.rule}: {match.shown(redact)}", 200)


def _attempt(
    call: Call, match: Match, status: ActionStatus, result: str | None, at: str
) -> Attempt:
    from resume_kit.core.inert import clip
    from resume_kit.infra.redact import redact
    from resume_kit.model.progress import Attempt

    return Attempt(
        status,
        at=at,
        session=call.session,
        command=clip(match.shown(redact), 500),
        call=call.call_id,
        result=None if result is None else _result(result),
    )


def _result(text: str) -> str:
    from resume_kit.core.inert import clip
    from resume_kit.infra.redact import redact

    return clip(" ".join(redact(text).split()), 200)


def _after(call: Call, layout: Layout, found: Sequence[Match], data: dict[str, Any]) -> None:
    from resume_kit.model.progress import now_iso
    from resume_kit.progress_file import ledger

    status, result = outcome(call.agent, data)
    shown = None if result is None else _result(result)
    at = now_iso()
    for match, key in _keyed(found):
        settled = ledger.settle(
            layout, key, status, call=call.call_id, session=call.session, result=shown, at=at
        )
        if not settled:  # the call ran after an "ask": its before-event recorded nothing
            ledger.record(layout, key, _attempt(call, match, status, result, at), _about(match))


def answer(agent: str, decision: Decision) -> str:
    """The JSON the agent's before-tool hook returns for ``decision``."""
    mode, reason = decision.mode, decision.reason
    if mode == "warn":
        payload: dict[str, Any] = {"systemMessage": reason}
        if agent == "cursor":
            payload = {"permission": "allow", "user_message": reason, "agent_message": reason}
    elif agent in ("claude", "codex"):
        if agent == "codex" and mode == "ask":
            # Codex 0.171 refuses "ask" from a PreToolUse hook ("unsupported permissionDecision:
            # ask") and would run the call: deny it, saying a person may allow it
            mode = "deny"
            reason += " (Codex hooks cannot ask: denied; a person can clear the record, then retry)"
        payload = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": mode,
                "permissionDecisionReason": reason,
            }
        }
    elif agent == "copilot":
        # preToolUse's flat answer; in `-p` mode Copilot 1.0.102 refuses an "ask" itself
        # ("Denied by preToolUse hook (unable to ask user for confirmation): …")
        payload = {"permissionDecision": mode, "permissionDecisionReason": reason}
    elif agent == "gemini":  # BeforeTool: "deny" (or "block") stops the call; no "ask"
        payload = {"decision": "deny", "reason": reason}
    else:  # cursor: beforeShellExecution / beforeMCPExecution
        payload = {"permission": mode, "user_message": reason, "agent_message": reason}
    return dumps(payload)


def _say(message: str) -> None:
    from resume_kit.infra.messages import say

    say(message)


def _arguments(argv: Sequence[str]) -> tuple[str, str] | None:
    args = list(argv)
    agent = "claude"
    if "--agent" in args:
        index = args.index("--agent")
        if index + 1 >= len(args):
            return None
        agent = args[index + 1]
        del args[index : index + 2]
    if len(args) != 1 or args[0] not in ("pre", "post") or agent not in AGENTS:
        return None
    return args[0], agent


def main(argv: Sequence[str] | None = None) -> int:
    parsed = _arguments(sys.argv[1:] if argv is None else argv)
    if parsed is None:
        _say(f"tool hook skipped: expected pre|post [--agent {'|'.join(AGENTS)}]")
        return 0
    phase, agent = parsed
    try:
        from resume_kit.integrations.agent_input import read_hook_object

        text = handle(phase, agent, read_hook_object(timeout=1.0))
        if text is not None:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
    except BaseException as exc:  # fail open, whatever went wrong (an interrupt too)
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        _say(f"tool hook skipped: {str(message).splitlines()[0] if message else 'error'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
