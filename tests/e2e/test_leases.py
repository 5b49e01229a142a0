"""Unit leases with real git: a bare repository on disk as the remote, three clones, two
worktrees of one clone (issue 19)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from resume_kit.core.leases import margin
from resume_kit.infra.paths import find_layout
from resume_kit.runner import leases as engine
from tests.conftest import git, run_cli

CLAIMER = """
import sys
from pathlib import Path
from resume_kit.infra.paths import find_layout
from resume_kit.runner.leases import claim
layout = find_layout(Path(sys.argv[1]))
for line in sys.stdin:
    result = claim(layout, line.strip(), "origin", 600.0)
    print(result.outcome, flush=True)
"""


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", "-b", "main", str(seed))
    (seed / "README.md").write_text("hi\n")
    assert run_cli("init", "--goal", "g", cwd=seed).code == 0
    for name in ("one", "two", "three"):
        assert run_cli("add", name, "--verify", "true", "--id", name, cwd=seed).code == 0
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "seed")
    git(seed, "push", "-q", str(bare), "main")
    return bare


def _clone(remote: Path, name: str) -> Path:
    target = remote.parent / name
    git(remote.parent, "clone", "-q", str(remote), str(target))
    return target


def _remote_refs(remote: Path) -> dict[str, str]:
    out = git(remote, "for-each-ref", "--format=%(refname) %(objectname)", "refs/resume-kit/")
    return dict(line.split(" ", 1)[::-1] for line in out.stdout.splitlines())


def test_one_holder_at_a_time_across_clones(remote: Path) -> None:
    a, b = _clone(remote, "a"), _clone(remote, "b")
    first = run_cli("claim", "one", cwd=a)
    assert first.code == 0, first.stderr
    assert "claimed one" in first.stdout
    assert "refs/resume-kit/leases/one" in _remote_refs(remote).values()
    second = run_cli("claim", "one", cwd=b)
    assert second.code == 5
    assert second.stderr.count("\n") == 2  # the error line and its hint
    assert "leased by" in second.stderr and str(a) in second.stderr and "until" in second.stderr
    # no id: the next ready unit nobody else holds
    nxt = run_cli("claim", cwd=b)
    assert nxt.code == 0 and "claimed two" in nxt.stdout
    assert run_cli("release", "one", cwd=b).code == 5
    renewed = run_cli("claim", "one", cwd=a)
    assert renewed.code == 0 and "renewed one" in renewed.stdout
    assert run_cli("release", "one", cwd=a).code == 0
    assert "refs/resume-kit/leases/one" not in _remote_refs(remote).values()
    assert run_cli("claim", "one", cwd=b).code == 0
    listed = json.loads(run_cli("leases", "--json", cwd=a).stdout)
    holders = {row["unit"]: row["holder"]["worktree"] for row in listed["leases"]}
    assert holders == {"one": str(b), "two": str(b)}


def test_worktrees_of_one_clone_share_the_local_refs(tmp_path: Path, repo: Path) -> None:
    assert run_cli("init", "--goal", "g", cwd=repo).code == 0
    assert run_cli("add", "x", "--verify", "true", "--id", "x", cwd=repo).code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "units")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", str(other))
    assert run_cli("claim", "x", cwd=repo).code == 0  # no remote: the clone's own refs
    taken = run_cli("claim", "x", cwd=other)
    assert taken.code == 5 and str(repo) in taken.stderr
    assert run_cli("release", "x", cwd=repo).code == 0
    assert run_cli("claim", "x", cwd=other).code == 0
    # an id is part of a ref name and a refspec: nothing else gets there
    bad = run_cli("release", "x:refs/heads/main", cwd=repo)
    assert bad.code == 2 and "is not a unit id" in bad.stderr


def test_unreachable_remote_exits_2_and_offline_takes_the_local_lock(remote: Path) -> None:
    a = _clone(remote, "a")
    git(a, "remote", "set-url", "origin", str(remote.parent / "gone.git"))
    down = run_cli("claim", "one", cwd=a)
    assert down.code == 2
    assert down.stderr.startswith("resume-kit: error: cannot read the leases on remote 'origin'")
    offline = run_cli("claim", "one", "--offline", cwd=a)
    assert offline.code == 0 and "(local)" in offline.stdout
    assert "warning: --offline" in offline.stderr
    assert git(a, "rev-parse", "-q", "--verify", "refs/resume-kit/leases/one").returncode == 0


def test_a_hostile_remote_url_runs_nothing(remote: Path, tmp_path: Path) -> None:
    a = _clone(remote, "a")
    proof = tmp_path / "pwned"
    git(a, "remote", "set-url", "origin", f"ext::sh -c touch% {proof}")
    git(a, "config", "core.sshCommand", f"touch {proof}")
    assert run_cli("claim", "one", cwd=a).code == 2
    git(a, "remote", "set-url", "origin", str(remote))
    git(a, "config", "remote.origin.receivepack", f"touch {proof}; git-receive-pack")
    hook = a / ".git" / "hooks" / "reference-transaction"
    hook.write_text(f"#!/bin/sh\ntouch {proof}\n")
    hook.chmod(0o755)
    assert run_cli("claim", "one", cwd=a).code == 0
    assert not proof.exists()


def test_expired_lease_is_taken_over_and_a_fast_clock_cannot_steal(remote: Path) -> None:
    a, b = _clone(remote, "a"), _clone(remote, "b")
    held = engine.claim(find_layout(a), "one", "origin", ttl=60.0)
    assert held.outcome == "taken" and held.lease is not None
    expired_at = held.lease.expires_at + margin(60.0) + 1
    later = engine.claim(find_layout(b), "one", "origin", ttl=60.0, clock=expired_at + 3600)
    # b's clock is an hour past the expiry, but b has only now seen this lease: still live
    assert later.outcome == "held"
    took = engine.claim(find_layout(b), "one", "origin", ttl=60.0, clock=expired_at + 7200)
    assert took.outcome == "took_over"
    # a renewal restarts everyone's own clock: a claim right after it cannot take it
    again = engine.claim(find_layout(b), "one", "origin", ttl=60.0, clock=expired_at + 7201)
    assert again.outcome == "renewed"
    back = engine.claim(find_layout(a), "one", "origin", ttl=60.0)
    assert back.outcome == "held"


def test_three_concurrent_claimers_one_winner_each_time(remote: Path) -> None:
    clones = [_clone(remote, name) for name in ("a", "b", "c")]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CLAIMER, str(clone)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for clone in clones
    ]
    try:
        for round_ in range(20):
            unit = f"race-{round_}"
            for proc in procs:  # the three start the round together
                assert proc.stdin is not None
                proc.stdin.write(unit + "\n")
                proc.stdin.flush()
            outcomes = []
            for proc in procs:
                assert proc.stdout is not None
                outcomes.append(proc.stdout.readline().strip())
            assert sorted(outcomes) == ["held", "held", "taken"], (round_, outcomes)
    finally:
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=30)
    assert len(_remote_refs(remote)) == 20


def test_kill_9_during_a_claim_leaves_no_lease_or_a_valid_one(remote: Path) -> None:
    a = _clone(remote, "a")
    for round_ in range(5):
        unit = f"k-{round_}"
        proc = subprocess.Popen(
            [sys.executable, "-c", CLAIMER, str(a)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert proc.stdin is not None
        proc.stdin.write(unit + "\n")
        proc.stdin.flush()
        # kill the whole group (git push included) at a point that moves each round
        subprocess.run([sys.executable, "-c", f"import time; time.sleep({0.05 * round_})"])
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        refs = {v: k for k, v in _remote_refs(remote).items()}
        ref = f"refs/resume-kit/leases/{unit}"
        if ref in refs:
            blob = git(remote, "cat-file", "blob", refs[ref]).stdout.encode()
            from resume_kit.core.leases import decode

            assert decode(blob, unit) is not None
        # either way, the unit can be claimed afterwards by its holder
        assert engine.claim(find_layout(a), unit, "origin").ok


TRUST_ALL = {"RESUME_KIT_TRUST": "all"}


def test_verify_next_and_run_skip_units_leased_by_someone_else(remote: Path) -> None:
    a, b = _clone(remote, "a"), _clone(remote, "b")
    assert run_cli("claim", "one", cwd=a).code == 0
    assert run_cli("leases", cwd=b).code == 0  # b now knows, with no network after this
    direct = run_cli("verify-next", "--unit", "one", cwd=b, env=TRUST_ALL)
    assert direct.code == 5 and "leased by" in direct.stderr
    nxt = run_cli("verify-next", cwd=b, env=TRUST_ALL)
    assert nxt.code == 0, nxt.stderr
    assert "skipped unit one is leased by" in nxt.stdout + nxt.stderr
    batch = run_cli("run", cwd=b, env=TRUST_ALL)
    assert "skipped, leased by someone else: one" in batch.stdout + batch.stderr
    text = (b / ".resume-kit" / "progress.yaml").read_text()
    assert text.count("status: done") == 2  # two and three; one is a's


def test_a_pass_records_evidence_and_releases_the_lease(remote: Path) -> None:
    a = _clone(remote, "a")
    assert run_cli("claim", "one", cwd=a).code == 0
    done = run_cli("verify-next", "--unit", "one", cwd=a, env=TRUST_ALL)
    assert done.code == 0, done.stderr
    assert "released the lease on one" in done.stdout + done.stderr
    assert "refs/resume-kit/leases/one" not in _remote_refs(remote).values()


def test_status_and_the_brief_show_who_holds_what_and_skip_it(remote: Path) -> None:
    a, b = _clone(remote, "a"), _clone(remote, "b")
    assert run_cli("claim", "one", cwd=a).code == 0
    assert run_cli("leases", cwd=b).code == 0
    status = run_cli("status", cwd=b)
    assert "leases:\n  one: " in status.stdout and f":{a} until " in status.stdout
    assert status.stdout.rstrip().endswith("next: two")  # the summary skips the leased unit
    data = json.loads(run_cli("status", "--json", cwd=b).stdout)
    assert data["leases"]["one"].endswith("Z")
    assert data["next"]["id"] == "two" and data["summary"].endswith("next: two")
    brief = run_cli("brief", cwd=b)
    assert "one leased by" in brief.stdout and str(a) in brief.stdout
    assert "Unit `two`" in brief.stdout.split("## Next", 1)[1]
    mine = run_cli("status", cwd=a)
    assert "one: you until" in mine.stdout and mine.stdout.rstrip().endswith("next: one")


def test_claim_without_an_id_moves_past_units_it_had_not_heard_were_leased(
    remote: Path,
) -> None:
    a, b, c = (_clone(remote, name) for name in ("a", "b", "c"))
    assert run_cli("claim", "one", cwd=a).code == 0
    assert run_cli("claim", "two", cwd=b).code == 0
    third = run_cli("claim", cwd=c)  # c has fetched nothing yet
    assert third.code == 0 and "claimed three" in third.stdout
    assert "renewed three" in run_cli("claim", cwd=c).stdout  # its own lease comes first
    none_left = run_cli("claim", cwd=_clone(remote, "d"))
    assert none_left.code == 3


def test_run_releases_our_lease_left_on_a_done_unit(repo: Path) -> None:
    """A run SIGKILLed between recording a pass and releasing its lease leaves the lease on a
    done unit, which no later run runs again: the next run releases it first."""
    assert run_cli("init", "--goal", "g", cwd=repo).code == 0
    for name in ("one", "two"):
        assert run_cli("add", name, "--verify", "true", "--id", name, cwd=repo).code == 0
    assert run_cli("verify-next", "--unit", "one", cwd=repo, env=TRUST_ALL).code == 0
    assert run_cli("claim", "one", "--offline", cwd=repo).code == 0  # as the killed run left it
    assert "one" in engine.ours(find_layout(repo))
    assert run_cli("run", cwd=repo, env=TRUST_ALL).code == 0
    assert engine.ours(find_layout(repo)) == {}
    assert git(repo, "for-each-ref", "refs/resume-kit/").stdout == ""


def test_a_ref_lock_a_killed_fetch_left_does_not_stop_the_next_claim(remote: Path) -> None:
    """git leaves ``<ref>.lock`` when a fetch dies while it updates that ref; every later fetch
    of the ref then fails ("cannot lock ref"). Only a fetch of resume-kit's own writes that
    namespace, and they take turns, so the next one removes it, and nothing else."""
    a, b = _clone(remote, "a"), _clone(remote, "b")
    assert engine.claim(find_layout(a), "k-1", "origin").ok
    leases = b / ".git" / "refs" / "resume-kit" / "remotes" / "origin" / "leases"
    leases.mkdir(parents=True)
    (leases / "k-1.lock").write_text("")  # as the killed fetch left it
    elsewhere = b / ".git" / "refs" / "heads" / "other.lock"
    elsewhere.write_text("")  # not resume-kit's: never touched
    result = engine.claim(find_layout(b), "k-1", "origin")
    assert result.outcome == "held" and result.lease is not None
    assert not (leases / "k-1.lock").exists()
    assert elsewhere.exists()


def test_stale_lock_removal_stays_in_its_own_folder(tmp_path: Path) -> None:
    """A remote name that climbs, or a symlinked leases folder, removes nothing."""
    common = tmp_path / "git"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.lock").write_text("")
    remotes = common / "refs" / "resume-kit" / "remotes"
    remotes.mkdir(parents=True)
    (remotes / "origin").mkdir()
    (remotes / "origin" / "leases").symlink_to(outside)
    (common / "refs" / "resume-kit" / "leases").mkdir()
    (common / "refs" / "resume-kit" / "leases" / "mine.lock").write_text("")
    for remote in ("origin", "../..", "origin/../..", "-x", "a;rm -rf ~"):
        engine._remove_stale_ref_locks(common, remote)
    assert (outside / "keep.lock").exists()
    assert (common / "refs" / "resume-kit" / "leases" / "mine.lock").exists()
