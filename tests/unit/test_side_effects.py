"""The side-effect rule table (issue 15 point 1): which command lines are side effects, and a
key that stays the same under noise that does not change what the command does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.core.side_effects import Match, Pattern, classify

# (command line, the rules found in it, in order); [] means: not a side effect
TABLE: list[tuple[str, list[str]]] = [
    # git push, tag pushes, global options, chains, subshells, wrappers
    ("git push", ["git-push"]),
    ("git push origin main", ["git-push"]),
    ("git push --tags", ["git-push"]),
    ("git push origin v1.2.0", ["git-push"]),
    ("git push origin refs/tags/v1.2.0", ["git-push"]),
    ("git -C ../other push", ["git-push"]),
    ("git -c http.sslVerify=false push origin HEAD", ["git-push"]),
    ("git --git-dir=.git --work-tree=. push", ["git-push"]),
    ("git --no-pager push -u origin feature", ["git-push"]),
    ("GIT_SSH_COMMAND='ssh -i k' git push", ["git-push"]),
    ("git add -A && git commit -m 'push it' && git push", ["git-push"]),
    ("make test; git push origin main", ["git-push"]),
    ("(cd sub && git push)", ["git-push"]),
    ("bash -c 'git push origin main'", ["git-push"]),
    ('sh -lc "cd repo && git push"', ["git-push"]),
    ("sudo -u deploy git push", ["git-push"]),
    ("env -i HOME=/root git push", ["git-push"]),
    ("timeout 60 git push", ["git-push"]),
    ("nohup git push > push.log 2>&1 &", ["git-push"]),
    ('echo "$(git push 2>&1)"', ["git-push"]),
    ("echo `git push`", ["git-push"]),
    ("eval 'git push'", ["git-push"]),
    ("/usr/bin/git push", ["git-push"]),
    ("git push --dry-run", []),
    ("git push -n origin main", []),
    ("git pull", []),
    ("git commit -m 'git push later'", []),
    ("echo git push", []),
    ("git status && git log --oneline -3", []),
    ("grep -r 'git push' docs/", []),
    # GitHub CLI
    ("gh pr create --fill", ["gh-pr-create"]),
    ("gh -R owner/repo pr merge 42 --squash", ["gh-pr-merge"]),
    ("gh release create v1.0 dist/*", ["gh-release-create"]),
    ("gh api -X POST repos/o/r/issues -f title=x", ["http-write"]),
    ("gh pr view 42", []),
    ("gh pr list", []),
    ("gh api repos/o/r/pulls", []),
    # package registries
    ("npm publish", ["npm-publish"]),
    ("npm publish --access public", ["npm-publish"]),
    ("pnpm publish -r", ["pnpm-publish"]),
    ("yarn publish", ["yarn-publish"]),
    ("yarn npm publish", ["yarn-publish"]),
    ("npm publish --dry-run", []),
    ("npm install", []),
    ("npm run publish-docs", []),
    ("twine upload dist/*", ["twine-upload"]),
    ("python -m twine upload dist/*", ["twine-upload"]),
    ("twine check dist/*", []),
    ("cargo publish", ["cargo-publish"]),
    ("cargo publish --dry-run", []),
    ("cargo build --release", []),
    ("docker push ghcr.io/o/app:1.0", ["docker-push"]),
    ("docker image push app:latest", ["docker-push"]),
    ("docker build -t app .", []),
    ("docker pull app", []),
    # clusters and infrastructure
    ("kubectl apply -f deploy.yaml", ["kubectl-apply"]),
    ("kubectl -n prod delete pod web-1", ["kubectl-delete"]),
    ("kubectl --context prod rollout restart deploy/web", ["kubectl-rollout"]),
    ("kubectl apply -f x.yaml --dry-run=client", []),
    ("kubectl get pods -n prod", []),
    ("helm install web ./chart", ["helm-install"]),
    ("helm upgrade --install web ./chart -f values.yaml", ["helm-upgrade"]),
    ("helm template web ./chart", []),
    ("terraform apply -auto-approve", ["terraform-apply"]),
    ("terraform -chdir=infra destroy", ["terraform-destroy"]),
    ("terraform plan", []),
    # HTTP
    ("curl -X POST https://api.example.com/hook", ["http-write"]),
    ("curl -XDELETE https://api.example.com/items/1", ["http-write"]),
    ("curl --request PUT https://x/y -d @body.json", ["http-write"]),
    ("curl -d 'a=1' https://x/y", ["http-write"]),
    ("curl --json '{\"a\": 1}' https://x/y", ["http-write"]),
    ("curl -F file=@a.txt https://x/upload", ["http-write"]),
    ("curl -fsSL https://example.com/install.sh", []),
    ("curl -X GET https://x/y", []),
    ("curl -o out.html https://example.com", []),
    ("wget --method=DELETE https://x/y", ["http-write"]),
    ("wget --post-data 'a=1' https://x/y", ["http-write"]),
    ("wget https://example.com/file.tar.gz", []),
    ("http POST https://x/y name=a", ["http-write"]),
    ("http https://x/y name=a", ["http-write"]),
    ("http https://x/y Accept:application/json", []),
    # remote shells and copies
    ("ssh deploy@host 'systemctl restart web'", ["ssh"]),
    ("ssh -p 2222 -i key host uptime", ["ssh"]),
    ("ssh host", []),
    ("scp build.tar.gz user@host:/srv/", ["scp"]),
    ("scp user@host:/var/log/app.log .", []),
    ("rsync -av dist/ host:/srv/www/", ["rsync"]),
    ("rsync -av --dry-run dist/ host:/srv/www/", []),
    ("rsync -av src/ backup/", []),
    # migrations and mail
    ("alembic upgrade head", ["migration"]),
    ("python -m alembic upgrade head", ["migration"]),
    ("alembic history", []),
    ("python manage.py migrate", ["migration"]),
    ("./manage.py migrate app 0004", ["migration"]),
    ("python manage.py makemigrations", []),
    ("npx prisma migrate deploy", ["migration"]),
    ("prisma migrate dev", []),
    ("uv run alembic upgrade head", ["migration"]),
    ("sendmail -t < mail.txt", ["mail"]),
    ("echo hi | mail -s subject a@b.c", ["mail"]),
    ("git send-email --to=a@b.c 0001.patch", ["mail"]),
    # more than one in a line; harmless commands
    ("git push && npm publish", ["git-push", "npm-publish"]),
    ("docker push a && kubectl apply -f k.yaml", ["docker-push", "kubectl-apply"]),
    ("pytest -q", []),
    ("ls -la", []),
    ("cat README.md | grep push", []),
    ("./release.sh", []),  # a side effect inside a script cannot be seen
    ("echo 'unbalanced", []),
    ("", []),
]


def test_the_table_is_large_enough() -> None:
    assert len(TABLE) >= 60
    assert sum(1 for _, rules in TABLE if rules) >= 30
    assert sum(1 for _, rules in TABLE if not rules) >= 30


@pytest.mark.parametrize(("command", "rules"), TABLE, ids=[c or "empty" for c, _ in TABLE])
def test_rule_table(command: str, rules: list[str]) -> None:
    assert [m.rule for m in classify(command)] == rules


def test_configured_patterns_add_side_effects() -> None:
    patterns = [Pattern("./release.sh*", "release", "deny"), Pattern("make   deploy*")]
    found = classify("cd app && ./release.sh --prod", patterns)
    assert [(m.rule, m.mode, m.context) for m in found] == [("release", "deny", ("app",))]
    assert [m.rule for m in classify("FOO=1 make deploy ENV=prod", patterns)] == ["custom"]
    assert classify("make test", patterns) == []
    # a pattern never hides a built-in rule
    assert [m.rule for m in classify("git push", [Pattern("git push*", "mine")])] == ["git-push"]


def key(command: str) -> str:
    (match,) = classify(command)
    return match.key()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("git push origin main --force-with-lease", "git  push --force-with-lease origin main"),
        ("git -C repo push origin main", "git -C  'repo' push 'origin' main"),
        ("curl -X POST https://x/y -H 'A: b'", "curl -H 'A: b' https://x/y -X POST"),
        ("curl -XPOST https://x/y", "curl https://x/y -X POST"),
        ("kubectl apply -f a.yaml -n prod", "kubectl apply -n prod -f a.yaml"),
        ("TOKEN=abc git push", "git push"),
        ("sudo git push", "git push"),
    ],
)  # fmt: skip
def test_key_ignores_noise(first: str, second: str) -> None:
    assert key(first) == key(second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("git push origin main", "git push origin release"),
        ("git push", "git push --force"),
        ("scp a host:b", "scp b host:a"),
        ("ssh host rm -rf /a", "ssh host rm -rf /b"),
        ("cd a && git push", "cd b && git push"),
        ("curl -X POST https://x/a", "curl -X POST https://x/b"),
    ],
)
def test_key_keeps_meaning(first: str, second: str) -> None:
    assert key(first) != key(second)


def test_key_is_redacted_before_hashing() -> None:
    from resume_kit.infra.redact import redact

    def match(token: str) -> Match:
        (found,) = classify(f"curl -X POST -H 'Authorization: Bearer {token}' https://x/y")
        return found

    first, second = match("s3cr3tTOKENvalue1"), match("an0therTOKENvalue2")
    assert first.key() != second.key()
    assert first.key(redact) == second.key(redact)
    assert "s3cr3t" not in first.shown(redact)


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_./:", min_size=1, max_size=12)
_SPACE = st.text(alphabet=" \t", min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(
    remote=_WORD.filter(lambda w: not w.startswith("-")),
    refs=st.lists(_WORD.filter(lambda w: not w.startswith("-")), max_size=3),
    flags=st.lists(st.sampled_from(["-u", "--force-with-lease", "--tags", "-q", "--atomic"]),
                   unique=True, max_size=4),
    gaps=st.lists(_SPACE, min_size=12, max_size=12),
    order=st.randoms(use_true_random=False),
    quote=st.booleans(),
)  # fmt: skip
def test_key_stable_under_whitespace_flag_order_and_quoting(
    remote: str, refs: list[str], flags: list[str], gaps: list[str], order: object, quote: bool
) -> None:
    import random

    assert isinstance(order, random.Random)
    positional = [remote, *refs]
    base = ["git", "push", *positional, *flags]
    shuffled_flags = flags[:]
    order.shuffle(shuffled_flags)
    # the flags go anywhere after `push`; the positional words keep their order
    noisy: list[str] = ["git", "push"]
    rest = positional[:]
    for flag in shuffled_flags:
        if rest and order.random() < 0.5:
            noisy.append(rest.pop(0))
        noisy.append(flag)
    noisy.extend(rest)
    if quote:
        noisy = [f"'{w}'" if i % 2 else w for i, w in enumerate(noisy)]
    spaced = "".join(w + gaps[i % len(gaps)] for i, w in enumerate(noisy))
    assert key(" ".join(base)) == key(gaps[0] + spaced)


def test_config_patterns_user_and_repository(tmp_path: Path, isolated_home: Path) -> None:
    """The user's config sets patterns and modes; a repository's adds patterns (at the default
    mode) and cannot set modes or remove the user's patterns."""
    from resume_kit.infra.paths import Layout
    from resume_kit.progress_file import config

    user = isolated_home / ".config" / "resume-kit" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text(
        "side_effects:\n"
        "  patterns: ['./release.sh*', {pattern: 'make deploy*', name: deploy, on_repeat: deny}]\n"
        "  on_repeat: {git-push: warn, default: ask}\n"
    )
    (tmp_path / ".resume-kit").mkdir()
    (tmp_path / ".resume-kit" / "config.yaml").write_text(
        "side_effects:\n"
        "  patterns: [{pattern: 'deploy-it*', name: theirs, on_repeat: warn}]\n"
        "  on_repeat: {default: warn}\n"
    )
    loaded = config.load(Layout(tmp_path, tmp_path / ".git", tmp_path / ".git"))
    assert loaded.side_effect_patterns == (
        Pattern("./release.sh*"),
        Pattern("make deploy*", "deploy", "deny"),
        Pattern("deploy-it*", "theirs", None),
    )
    assert loaded.side_effect_modes == (("git-push", "warn"), ("default", "ask"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("side_effects: [a]", "side_effects must be a mapping"),
        ("side_effects: {patterns: a}", "side_effects.patterns must be a list"),
        ("side_effects: {on_repeat: block}", "must be one of ask, deny, warn"),
        ("side_effects: {patterns: [{pattern: x, why: y}]}", "unknown key"),
        ("side_effects: {patterns: [3]}", "is not a glob"),
        ("side_effects: {other: 1}", "unknown key 'side_effects.other'"),
    ],
)
def test_config_errors(text: str, message: str) -> None:
    import yaml

    from resume_kit.infra.errors import ConfigError
    from resume_kit.progress_file import config

    with pytest.raises(ConfigError, match=re.escape(message)):
        config.parse(yaml.safe_load(text))
