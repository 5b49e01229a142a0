"""Which shell commands are side effects outside the work tree, and their stable ledger key.

Pure: no I/O, stdlib only (the tool hook runs this on every shell call). A command line is
split with :mod:`shlex` into simple commands (``&&``, ``||``, ``;``, ``|``, ``&``, subshells,
``$( … )``), each stripped of environment assignments and wrappers (``sudo``, ``env``,
``nohup``, ``timeout 10``, ``npx``, ``python -m``, …; ``bash -c '…'`` and ``eval`` are parsed
again), then checked against the built-in rules and the configured patterns. A side effect
hidden inside a script (``./release.sh``) cannot be seen: only a pattern names it.

The key is ``<rule>-<10 hex digits>``: a SHA-256 of the matched command normalised (quoting and
white space gone, options sorted with their values, environment assignments dropped, ``cd``
targets earlier in the chain kept), after secret redaction by the caller-supplied function.
"""

from __future__ import annotations

import fnmatch
import itertools
import re
import shlex
from collections.abc import Callable, Iterable, Sequence

from resume_kit.core.digest import sha256
from resume_kit.core.lazy_regex import lazy
from resume_kit.core.light_dataclass import dataclass

MODES = ("ask", "deny", "warn")
DEFAULT_MODE = "ask"
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "|&", ";;", "(", ")", "{", "}", "\n", "`"})
_REDIRECTS = frozenset({">", ">>", "<", ">&", "&>", "&>>", "<<", "<<<", ">|", "<&", "<>"})
_ASSIGNMENT = lazy(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
_MAX_DEPTH = 4  # bash -c 'bash -c "…"': nested no deeper than this
_MAX_CHARS = 20_000  # a longer command line is only searched in its first part


@dataclass(frozen=True)
class Pattern:
    """A configured side effect: a glob over a normalised simple command (``make release*``)."""

    glob: str
    name: str = "custom"
    mode: str | None = None  # ask | deny | warn; None: the configured default


@dataclass(frozen=True)
class Match:
    rule: str
    words: tuple[str, ...]  # the simple command as matched (wrappers and assignments gone)
    context: tuple[str, ...] = ()  # `cd DIR` earlier in the same chain
    mode: str | None = None

    def normalised(self) -> str:
        """The meaning of the command as one string: what the key hashes."""
        if self.rule == "mcp-write":  # the tool's name and its arguments as sorted JSON
            return " ".join(self.words)
        body = " ".join(_canonical(self.rule, self.words))
        return " ; ".join([*(f"cd {d}" for d in self.context), body])

    def key(self, redact: Callable[[str], str] = lambda s: s) -> str:
        digest = sha256(redact(self.normalised()).encode("utf-8")).hexdigest()
        return f"{self.rule}-{digest[:10]}"

    def shown(self, redact: Callable[[str], str] = lambda s: s) -> str:
        if self.rule == "mcp-write":
            return redact(" ".join(self.words))
        return redact(" ".join(shlex.quote(w) for w in self.words))


# --------------------------------------------------------------------------- splitting


def _tokens(command: str) -> list[str]:
    # a backquote separates like `$(`: spaced out, it is a token of its own (inside double
    # quotes it stays in the word, and _substitution finds it there)
    command = command[:_MAX_CHARS].replace("`", " ` ")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: the words as they stand
        return command.split()


def simple_commands(command: str, depth: int = 0) -> list[tuple[tuple[str, ...], list[str]]]:
    """Each simple command of ``command`` as (``cd`` targets before it in its chain, words)."""
    found: list[tuple[tuple[str, ...], list[str]]] = []
    context: list[str] = []
    current: list[str] = []

    def flush() -> None:
        words = _strip(current)
        current.clear()
        if not words:
            return
        if words[0] == "cd" and len(words) <= 2:
            context.append(words[1] if len(words) == 2 else "~")
            return
        inner = _inner_script(words)
        if inner is not None and depth < _MAX_DEPTH:
            for ctx, nested in simple_commands(inner, depth + 1):
                found.append(((*context, *ctx), nested))
            return
        found.append((tuple(context), words))

    tokens = _tokens(command)
    skip = False
    for index, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        if token == "$" and tokens[index + 1 : index + 2] == ["("]:
            continue  # `$(`: the parenthesis separates
        if token in _SEPARATORS:
            flush()
            continue
        if token in _REDIRECTS:
            if current and current[-1].isdigit():
                current.pop()  # the descriptor of `2>&1`
            skip = True  # the redirection's target
            continue
        inner = _substitution(token)
        if inner is not None and depth < _MAX_DEPTH:
            found.extend(simple_commands(inner, depth + 1))
        current.append(token)
    flush()
    return found


def _substitution(word: str) -> str | None:
    """The command inside a ``$( … )`` or backquotes within one word (``"$(git push)"``)."""
    start = word.find("$(")
    if start >= 0:
        end = word.rfind(")")
        return word[start + 2 : end if end > start else None]
    first, last = word.find("`"), word.rfind("`")
    return word[first + 1 : last] if 0 <= first < last else None


def _inner_script(words: list[str]) -> str | None:
    """The script of ``bash -c '…'`` or ``eval …``, else None."""
    if words[0] == "eval" and len(words) > 1:
        return " ".join(words[1:])
    if _base(words[0]) in _SHELLS:
        for index, word in enumerate(words[1:], 1):
            if word == "-c" or (word.startswith("-") and not word.startswith("--") and "c" in word):
                return words[index + 1] if index + 1 < len(words) else None
            if not word.startswith("-"):
                return None
    return None


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


# Wrappers: the command they run, after their own options (a set of options taking a value).
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "-o"}),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "builtin": frozenset(),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "xargs": frozenset({"-n", "-I", "-L", "-P", "-d", "-s", "-E", "-a"}),
    "npx": frozenset({"-p", "--package"}),
    "bunx": frozenset(),
    "watch": frozenset({"-n", "-d"}),
}
_RUNNERS = {  # `uv run X`, `pnpm exec X`, `poetry run X`: the second word, then the command
    "uv": "run",
    "poetry": "run",
    "pipenv": "run",
    "pnpm": "exec",
    "pdm": "run",
    "hatch": "run",
    "bundle": "exec",
}


def _strip(words: Sequence[str]) -> list[str]:
    """``words`` without leading assignments, wrappers and their options."""
    rest = list(words)
    for _ in range(16):
        while rest and _ASSIGNMENT.match(rest[0]):
            rest.pop(0)
        if not rest:
            return rest
        head = _base(rest[0])
        if head == "timeout":
            rest = _after_options(rest[1:], frozenset({"-s", "-k", "--signal", "--kill-after"}))
            rest = rest[1:]  # the duration
            continue
        if head in _WRAPPERS:
            rest = _after_options(rest[1:], _WRAPPERS[head])
            continue
        if head in _RUNNERS and len(rest) > 1 and rest[1] == _RUNNERS[head]:
            rest = rest[2:]
            continue
        if head in ("pnpm", "yarn") and len(rest) > 1 and rest[1] == "dlx":
            rest = rest[2:]
            continue
        if re.fullmatch(r"python[0-9.]*", head) and len(rest) > 2 and rest[1] == "-m":
            rest = rest[2:]
            continue
        if re.fullmatch(r"python[0-9.]*", head) and len(rest) > 1 and rest[1].endswith(".py"):
            rest = rest[1:]
            continue
        return rest
    return rest


def _after_options(words: list[str], with_value: frozenset[str]) -> list[str]:
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            return words[index + 1 :]
        if _ASSIGNMENT.match(word):  # env FOO=1 cmd
            index += 1
            continue
        if not word.startswith("-") or word == "-":
            break
        index += 2 if word in with_value else 1
    return words[index:]


# --------------------------------------------------------------------------- rules


def _options_and_args(
    words: Sequence[str], with_value: frozenset[str] = frozenset()
) -> tuple[list[str], list[str]]:
    """Options (a value joined as ``-X=POST``) and positional words, in their order."""
    options: list[str] = []
    args: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            args.extend(words[index + 1 :])
            break
        if word.startswith("-") and word != "-":
            if word in with_value and index + 1 < len(words):
                options.append(f"{word}={words[index + 1]}")
                index += 2
                continue
            if not word.startswith("--") and word[:2] in with_value:  # -XPOST is -X POST
                options.append(f"{word[:2]}={word[2:]}")
                index += 1
                continue
            options.append(word)
        else:
            args.append(word)
        index += 1
    return options, args


def _dry(options: Iterable[str]) -> bool:
    return any(o == "-n" or o.startswith("--dry-run") or o == "--what-if" for o in options)


_GIT_GLOBAL = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}
)
_GIT_PUSH_VALUE = frozenset({"-o", "--push-option", "--repo", "--receive-pack", "--exec"})


def _git(args: list[str]) -> str | None:
    rest = _after_options(args, _GIT_GLOBAL)
    if not rest:
        return None
    if rest[0] == "push":
        options, _ = _options_and_args(rest[1:], _GIT_PUSH_VALUE)
        return None if _dry(options) else "git-push"
    if rest[0] == "send-email":
        return "mail"
    return None


_GH_GLOBAL = frozenset({"-R", "--repo", "--hostname"})


def _gh(args: list[str]) -> str | None:
    rest = _after_options(args, _GH_GLOBAL)
    if len(rest) >= 2 and rest[0] == "pr" and rest[1] in ("create", "merge"):
        return f"gh-pr-{rest[1]}"
    if len(rest) >= 2 and rest[0] == "release" and rest[1] == "create":
        return "gh-release-create"
    if rest[:1] == ["api"]:
        options, _ = _options_and_args(rest[1:], frozenset({"-X", "--method", "-H", "--header"}))
        method = next((o.split("=", 1)[1] for o in options if o[:3] in ("-X=", "--m")), "")
        writes = method.upper() in _WRITE_METHODS or any(
            o in ("-f", "-F", "--field", "--raw-field", "--input") for o in options
        )
        return "http-write" if writes else None
    return None


def _publish(args: list[str], name: str) -> str | None:
    rest = args[1:] if args[:1] == ["npm"] and name == "yarn" else args  # `yarn npm publish`
    if rest[:1] != ["publish"]:
        return None
    options, _ = _options_and_args(rest[1:])
    return None if _dry(options) else f"{name}-publish"


_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_CURL_VALUE = frozenset(
    {"-X", "--request", "-H", "--header", "-o", "--output", "-u", "--user", "-A", "-e", "-b",
     "-c", "-w", "-m", "--max-time", "--connect-timeout", "-x", "--proxy", "-K", "--config",
     "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "-F", "--form", "-T",
     "--upload-file", "--json", "--form-string", "--cacert", "--cert", "--key", "-r", "-E"}
)  # fmt: skip
_CURL_DATA = ("-d", "--data", "-F", "--form", "-T", "--upload-file", "--json", "--form-string")


def _curl(args: list[str]) -> str | None:
    options, _ = _options_and_args(args, _CURL_VALUE)
    for option in options:
        name, _, value = option.partition("=")
        if name in ("-X", "--request") and value.upper() in _WRITE_METHODS:
            return "http-write"
        if re.fullmatch(r"-X(POST|PUT|PATCH|DELETE)", option, re.IGNORECASE):
            return "http-write"
        if name.startswith(_CURL_DATA) and (name in _CURL_DATA or name.startswith("--data")):
            return "http-write"
    return None


def _wget(args: list[str]) -> str | None:
    for word in args:
        name, _, value = word.partition("=")
        if name in ("--post-data", "--post-file", "--body-data", "--body-file"):
            return "http-write"
        if name == "--method" and value.upper() in _WRITE_METHODS:
            return "http-write"
    for first, second in itertools.pairwise(args):
        if first == "--method" and second.upper() in _WRITE_METHODS:
            return "http-write"
    return None


def _httpie(args: list[str]) -> str | None:
    options, positional = _options_and_args(args)
    if positional and positional[0].upper() in _WRITE_METHODS:
        return "http-write"
    if any(o in ("-f", "--form") for o in options):
        return "http-write"
    # request items after the URL: `field=value`, `field:=json`, `field@file` send a body
    for item in positional[1:]:
        if re.match(r"[^:=@\s]+(:=|=|@)", item) and not re.match(r"[^:=@\s]+==", item):
            return "http-write"
    return None


_SSH_VALUE = frozenset(
    {"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p",
     "-Q", "-R", "-S", "-W", "-w", "-B"}
)  # fmt: skip


def _ssh(args: list[str]) -> str | None:
    rest = _after_options(args, _SSH_VALUE)
    return "ssh" if len(rest) >= 2 else None


_REMOTE = lazy(r"(?:[^/@:\s]+@)?[A-Za-z0-9_.\[\]-]+:(?!//)")


def _remote(path: str) -> bool:
    if path.startswith(("/", "./", "../", "~")):
        return False
    return path.startswith(("rsync://", "scp://")) or bool(_REMOTE.match(path))


def _copy(args: list[str], name: str) -> str | None:
    value = _SSH_VALUE if name == "scp" else frozenset({"-e", "--rsh", "--exclude", "--include"})
    options, positional = _options_and_args(args, value)
    if name == "rsync" and _dry(options):
        return None
    if len(positional) >= 2 and _remote(positional[-1]):
        return name
    return None


def _kubectl(args: list[str]) -> str | None:
    rest = _after_options(
        args, frozenset({"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "-s"})
    )
    if rest and rest[0] in ("apply", "delete", "rollout", "replace", "patch", "scale"):
        options, _ = _options_and_args(rest[1:])
        if any(o.startswith("--dry-run") and o != "--dry-run=none" for o in options):
            return None
        return "kubectl-" + rest[0]
    return None


def _helm(args: list[str]) -> str | None:
    rest = _after_options(args, frozenset({"-n", "--namespace", "--kube-context", "--kubeconfig"}))
    if rest and rest[0] in ("install", "upgrade", "uninstall", "rollback"):
        options, _ = _options_and_args(rest[1:])
        return None if _dry(options) else f"helm-{rest[0]}"
    return None


def _terraform(args: list[str]) -> str | None:
    rest = _after_options(args, frozenset())
    if rest and rest[0] in ("apply", "destroy"):
        return f"terraform-{rest[0]}"
    return None


def _second(args: list[str], first: str, second: Iterable[str], rule: str) -> str | None:
    return rule if len(args) >= 2 and args[0] == first and args[1] in set(second) else None


_MAIL = frozenset({"sendmail", "mail", "mailx", "mutt", "msmtp", "swaks", "s-nail", "neomutt"})


def _rule_of(words: Sequence[str]) -> str | None:
    head, args = _base(words[0]), list(words[1:])
    if head == "git":
        return _git(args)
    if head == "gh":
        return _gh(args)
    if head in ("npm", "pnpm", "yarn"):
        return _publish(args, head)
    if head == "twine":
        return _second(["twine", *args], "twine", ["upload"], "twine-upload")
    if head == "cargo":
        options, positional = _options_and_args(args)
        return "cargo-publish" if positional[:1] == ["publish"] and not _dry(options) else None
    if head in ("docker", "podman"):
        rest = _after_options(args, frozenset({"-H", "--host", "--context", "--config"}))
        if rest[:1] == ["push"] or rest[:2] == ["image", "push"]:
            return "docker-push"
        return None
    if head in ("kubectl", "oc"):
        return _kubectl(args)
    if head == "helm":
        return _helm(args)
    if head in ("terraform", "tofu"):
        return _terraform(args)
    if head in ("curl",):
        return _curl(args)
    if head == "wget":
        return _wget(args)
    if head in ("http", "https", "xh"):
        return _httpie(args)
    if head == "ssh":
        return _ssh(args)
    if head in ("scp", "rsync"):
        return _copy(args, head)
    if head == "alembic":
        rest = _after_options(args, frozenset({"-c", "--config", "-n", "--name", "-x"}))
        return "migration" if rest[:1] in (["upgrade"], ["downgrade"]) else None
    if head in ("manage.py", "django-admin"):
        return "migration" if args[:1] == ["migrate"] else None
    if head == "prisma":
        if args[:2] == ["migrate", "deploy"] or args[:2] == ["db", "push"]:
            return "migration"
        return None
    if head in _MAIL:
        return "mail"
    return None


# --------------------------------------------------------------------------- the entry points


def classify(command: str, patterns: Sequence[Pattern] = ()) -> list[Match]:
    """Every side effect in ``command`` (a shell command line), in order."""
    found: list[Match] = []
    for context, words in simple_commands(command):
        rule = _rule_of(words)
        if rule is not None:
            found.append(Match(rule, tuple(words), context))
            continue
        text = " ".join(words)
        for pattern in patterns:
            if fnmatch.fnmatchcase(text, " ".join(pattern.glob.split())):
                found.append(Match(pattern.name, tuple(words), context, pattern.mode))
                break
    return found


# Options taking a value, for the key: `-X POST` and `-XPOST`... sort as one item.
_KEY_VALUES: dict[str, frozenset[str]] = {
    "http-write": _CURL_VALUE,
    "git-push": _GIT_GLOBAL | _GIT_PUSH_VALUE,
    "ssh": _SSH_VALUE,
    "scp": _SSH_VALUE,
}


def _canonical(rule: str, words: Sequence[str]) -> list[str]:
    """The words with options sorted (each with its value) after the positional words."""
    head = _base(words[0])
    values = _KEY_VALUES.get(rule, frozenset()) | frozenset(
        {"-n", "--namespace", "-f", "--filename", "--context", "-C", "-R", "--repo"}
        if rule.startswith(("kubectl", "helm", "gh"))
        else ()
    )
    if rule == "ssh":  # the remote command is positional text: keep its words in order
        args = list(words[1:])
        rest = _after_options(args, _SSH_VALUE)
        options, _ = _options_and_args(args[: len(args) - len(rest)], values)
        return [head, *sorted(set(options)), *rest]
    options, positional = _options_and_args(words[1:], values)
    return [head, *positional, *sorted(set(options))]


# An MCP tool whose name says it writes somewhere: `mcp__github__create_pull_request`,
# `mcp__slack__send_message` (Claude Code, Codex), `mcp_github_merge_pull_request` (Gemini).
_MCP_WRITE = lazy(
    r"(?:^|[_\-.])(create|update|delete|remove|send|post|publish|merge|push|write|deploy|"
    r"comment|close|reopen|upload|transfer|pay|charge|invite|approve|submit|execute|run|"
    r"trigger|dispatch|release|archive|move|rename|edit|set|add|put|patch|insert|drop)"
    r"(?:$|[_\-.A-Z])",
    re.IGNORECASE,
)


def classify_tool(name: str, tool_input: object) -> Match | None:
    """An MCP tool call that writes outside the work tree, as a side effect (``mcp-write``);
    None for any other tool (the shell tool goes through :func:`classify`)."""
    if not name.startswith("mcp_"):
        return None
    tool = name.split("__", 2)[-1] if "__" in name else name
    if not _MCP_WRITE.search(tool):
        return None
    import json

    try:
        arguments = json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        arguments = repr(tool_input)
    return Match("mcp-write", (name, arguments))
