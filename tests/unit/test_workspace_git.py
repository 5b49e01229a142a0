"""Git facts on real repositories in every state a developer's repository can be in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resume_kit.facts.git import (
    display_path,
    parse_numstat_z,
    parse_status_v2,
    read_git_facts,
)
from tests.conftest import git


def facts(root: Path, **kwargs: Any) -> dict[str, Any]:
    out = git(root, "rev-parse", "--absolute-git-dir", "--git-common-dir").stdout.split("\n")
    git_dir = Path(out[0])
    common_dir = Path(out[1]) if os.path.isabs(out[1]) else (root / out[1]).resolve()
    return read_git_facts(root, git_dir, common_dir, **kwargs)


def commit_file(root: Path, name: str, text: str, message: str | None = None) -> str:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(root, "add", "--", name)
    git(root, "commit", "-q", "-m", message or f"write {name}")
    return git(root, "rev-parse", "HEAD").stdout.strip()


def two_diverging_branches(root: Path) -> None:
    """``main`` and ``topic`` both change f.txt's only line: any combination conflicts."""
    commit_file(root, "f.txt", "base\n", "base")
    git(root, "checkout", "-q", "-b", "topic")
    commit_file(root, "f.txt", "topic\n", "topic change")
    git(root, "checkout", "-q", "main")
    commit_file(root, "f.txt", "main\n", "main change")


def assert_conflict(result: dict[str, Any], operation: str) -> None:
    assert result["repo"]["operation"] == operation
    assert result["repo"]["conflicts"] == [{"path": "f.txt", "status": "UU"}]
    assert all(item["path"] != "f.txt" for item in result["changes"]["unstaged"])


# ---- clean, dirty, the work tree ----------------------------------------------------------------


def test_clean_repository(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    result = facts(repo)
    assert result["repo"] == {
        "root": str(repo),
        "head": head,
        "branch": "main",
        "unborn": False,
        "upstream": None,
        "ahead": None,
        "behind": None,
        "operation": None,
        "conflicts": [],
        "stash_count": 0,
        "shallow": False,
        "worktree": {
            "linked": False,
            "git_dir": str(repo / ".git"),
            "common_dir": str(repo / ".git"),
        },
        "submodules": [],
    }
    assert result["changes"] == {
        "staged": [],
        "unstaged": [],
        "untracked": [],
        "counts": {"staged": 0, "unstaged": 0, "untracked": 0},
        "truncated": False,
    }
    (commit,) = result["recent_commits"]
    assert commit["sha"] == head
    assert commit["subject"] == "initial"
    assert commit["unit"] is None
    assert commit["time"].endswith("Z") and len(commit["time"]) == 20


def test_dirty_tree_staged_unstaged_untracked_and_line_counts(repo: Path) -> None:
    commit_file(repo, "src/a.py", "one\ntwo\nthree\n")
    commit_file(repo, "old_name.txt", "same\n")
    commit_file(repo, "gone.txt", "bye\n")
    (repo / "src" / "a.py").write_text("one\nTWO\nthree\nfour\n")  # unstaged: +2 -1
    (repo / "README.md").write_text("hello\nworld\n")
    git(repo, "add", "README.md")  # staged: +1
    (repo / "README.md").write_text("hello\nworld\nagain\n")  # and unstaged on top: +1
    git(repo, "mv", "old_name.txt", "new name.txt")
    git(repo, "rm", "-q", "gone.txt")
    (repo / "image.bin").write_bytes(b"\x00\x01\x02" * 10)
    git(repo, "add", "image.bin")
    (repo / "notes.txt").write_text("untracked\n")
    (repo / "build").mkdir()
    (repo / "build" / "x.o").write_text("o")
    (repo / ".resume-kit" / "snapshots").mkdir(parents=True)
    (repo / ".resume-kit" / "snapshots" / "s.json").write_text("{}")

    changes = facts(repo)["changes"]
    assert changes["staged"] == [
        {"path": "README.md", "status": "M", "added": 1, "deleted": 0},
        {"path": "gone.txt", "status": "D", "added": 0, "deleted": 1},
        {"path": "image.bin", "status": "A", "added": None, "deleted": None},
        {"path": "new name.txt", "status": "R", "added": 0, "deleted": 0, "from": "old_name.txt"},
    ]
    assert changes["unstaged"] == [
        {"path": "README.md", "status": "M", "added": 1, "deleted": 0},
        {"path": "src/a.py", "status": "M", "added": 2, "deleted": 1},
    ]
    assert changes["untracked"] == [
        {"path": "build/", "status": "?", "added": None, "deleted": None},
        {"path": "notes.txt", "status": "?", "added": None, "deleted": None},
    ]
    assert changes["counts"] == {"staged": 4, "unstaged": 2, "untracked": 2}
    assert changes["truncated"] is False


def test_changes_under_state_dir_are_left_out_entirely(repo: Path) -> None:
    commit_file(repo, ".resume-kit/progress.yaml", "goal: x\n")
    (repo / ".resume-kit" / "progress.yaml").write_text("goal: y\n")
    (repo / ".resume-kit" / "new.txt").write_text("n")
    (repo / ".resume-kitten").write_text("not the state dir")
    changes = facts(repo)["changes"]
    assert changes["unstaged"] == []
    assert [u["path"] for u in changes["untracked"]] == [".resume-kitten"]
    assert changes["counts"] == {"staged": 0, "unstaged": 0, "untracked": 1}


def test_non_utf8_file_name_is_kept_escaped(repo: Path) -> None:
    name = os.fsdecode(b"caf\xe9.txt")
    (repo / name).write_text("un\n")
    result = facts(repo)
    assert result["changes"]["untracked"][0]["path"] == "caf\\xe9.txt"
    git(repo, "add", "--", name)
    git(repo, "commit", "-q", "-m", "add odd name")
    (repo / name).write_text("un\ndeux\n")
    (repo / "naïve.txt").write_text("utf-8 is kept as is\n")
    changes = facts(repo)["changes"]
    assert changes["unstaged"] == [
        {"path": "caf\\xe9.txt", "status": "M", "added": 1, "deleted": 0}
    ]
    assert changes["untracked"][0]["path"] == "naïve.txt"
    assert display_path(name) == "caf\\xe9.txt"


def test_ten_thousand_untracked_files_in_one_folder_collapse(repo: Path) -> None:
    many = repo / "generated"
    many.mkdir()
    for i in range(10_000):
        (many / f"f{i:05}.json").write_bytes(b"{}")
    changes = facts(repo)["changes"]
    assert changes["untracked"] == [
        {"path": "generated/", "status": "?", "added": None, "deleted": None}
    ]
    assert changes["counts"]["untracked"] == 1


def test_lists_are_capped_with_counts_and_truncated_flag(repo: Path) -> None:
    for i in range(30):
        (repo / f"tracked{i:02}.txt").write_text("a\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "thirty files")
    for i in range(30):
        (repo / f"tracked{i:02}.txt").write_text("a\nb\n")
    for i in range(25):
        (repo / f"loose{i:02}.txt").write_text("x")
    changes = facts(repo, max_paths=10)["changes"]
    assert changes["counts"] == {"staged": 0, "unstaged": 30, "untracked": 25}
    assert changes["truncated"] is True
    assert [u["path"] for u in changes["unstaged"]] == [f"tracked{i:02}.txt" for i in range(10)]
    assert all(u["added"] == 1 and u["deleted"] == 0 for u in changes["unstaged"])
    assert len(changes["untracked"]) == 10


# ---- operations in progress ---------------------------------------------------------------------


def test_merge_conflict(repo: Path) -> None:
    two_diverging_branches(repo)
    assert git(repo, "merge", "topic", check=False).returncode != 0
    result = facts(repo)
    assert_conflict(result, "merge")
    assert result["repo"]["branch"] == "main"


@pytest.mark.parametrize("backend", ["--merge", "--apply"])
def test_rebase_stopped_on_conflict(repo: Path, backend: str) -> None:
    two_diverging_branches(repo)
    git(repo, "checkout", "-q", "topic")
    assert git(repo, "rebase", backend, "main", check=False).returncode != 0
    result = facts(repo)
    assert_conflict(result, "rebase")
    assert result["repo"]["branch"] is None  # HEAD is detached while a rebase runs


def test_am_stopped_on_conflict(repo: Path, tmp_path: Path) -> None:
    two_diverging_branches(repo)
    patches = tmp_path / "patches"
    git(repo, "format-patch", "-q", "-o", str(patches), "main..topic")
    (patch,) = patches.iterdir()
    assert git(repo, "am", "-3", str(patch), check=False).returncode != 0
    assert_conflict(facts(repo), "am")


def test_cherry_pick_conflict(repo: Path) -> None:
    two_diverging_branches(repo)
    assert git(repo, "cherry-pick", "topic", check=False).returncode != 0
    assert_conflict(facts(repo), "cherry-pick")


def test_revert_conflict(repo: Path) -> None:
    commit_file(repo, "f.txt", "1\n")
    commit_file(repo, "f.txt", "2\n")
    commit_file(repo, "f.txt", "3\n")
    assert git(repo, "revert", "--no-edit", "HEAD~1", check=False).returncode != 0
    assert_conflict(facts(repo), "revert")


def test_multi_commit_cherry_pick_paused_between_commits(repo: Path) -> None:
    two_diverging_branches(repo)
    git(repo, "checkout", "-q", "-b", "side", "main~1")
    commit_file(repo, "g.txt", "g\n")
    git(repo, "checkout", "-q", "main")
    assert git(repo, "cherry-pick", "topic", "side", check=False).returncode != 0
    (repo / "f.txt").write_text("resolved\n")
    git(repo, "add", "f.txt")
    # committing the resolution removes CHERRY_PICK_HEAD; the sequence is still in progress
    git(repo, "commit", "-q", "--no-edit")
    result = facts(repo)
    assert result["repo"]["operation"] == "cherry-pick"
    assert result["repo"]["conflicts"] == []


def test_bisect(repo: Path) -> None:
    for i in range(4):
        commit_file(repo, "n.txt", f"{i}\n")
    git(repo, "bisect", "start", "HEAD", "HEAD~4")
    result = facts(repo)
    assert result["repo"]["operation"] == "bisect"
    assert result["repo"]["branch"] is None


def test_detached_head(repo: Path) -> None:
    head = commit_file(repo, "x.txt", "x\n")
    git(repo, "checkout", "-q", "--detach")
    result = facts(repo)
    assert result["repo"]["branch"] is None
    assert result["repo"]["head"] == head
    assert result["repo"]["operation"] is None


def test_no_commits_yet(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "trunk")
    result = facts(root)
    assert result["repo"]["unborn"] is True
    assert result["repo"]["head"] is None
    assert result["repo"]["branch"] == "trunk"
    assert result["recent_commits"] == []
    (root / "a.txt").write_text("1\n2\n")
    git(root, "add", "a.txt")
    (root / "b.txt").write_text("b\n")
    changes = facts(root)["changes"]
    assert changes["staged"] == [{"path": "a.txt", "status": "A", "added": 2, "deleted": 0}]
    assert [u["path"] for u in changes["untracked"]] == ["b.txt"]


# ---- branches, remotes, stash, worktrees, submodules --------------------------------------------


def test_upstream_ahead_and_behind(tmp_path: Path, repo: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "-u", "origin", "main")
    assert facts(repo)["repo"]["ahead"] == 0
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    commit_file(other, "theirs.txt", "t\n")
    git(other, "push", "-q", "origin", "main")
    commit_file(repo, "mine1.txt", "1\n")
    commit_file(repo, "mine2.txt", "2\n")
    git(repo, "fetch", "-q", "origin")
    result = facts(repo)["repo"]
    assert (result["upstream"], result["ahead"], result["behind"]) == ("origin/main", 2, 1)


def test_upstream_gone(tmp_path: Path, repo: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "-u", "origin", "main")
    git(repo, "branch", "-q", "-r", "-d", "origin/main")
    result = facts(repo)["repo"]
    assert (result["upstream"], result["ahead"], result["behind"]) == ("origin/main", None, None)
    from tests.conftest import run_cli

    run_cli("init", "--goal", "g", cwd=repo)
    shown = run_cli("status", cwd=repo).stdout
    assert "(upstream origin/main: not fetched)" in shown  # not "ahead None, behind None"


def test_stash_count(repo: Path) -> None:
    for text in ("a\n", "b\n"):
        (repo / "README.md").write_text(text)
        git(repo, "stash", "-q")
    assert facts(repo)["repo"]["stash_count"] == 2


def test_linked_worktree(repo: Path, tmp_path: Path) -> None:
    linked = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    (linked / "w.txt").write_text("w")
    result = facts(linked)
    worktree = result["repo"]["worktree"]
    assert worktree["linked"] is True
    assert Path(worktree["common_dir"]).resolve() == (repo / ".git").resolve()
    assert Path(worktree["git_dir"]).parent == (repo / ".git" / "worktrees").resolve()
    assert result["repo"]["branch"] == "feature"
    assert [u["path"] for u in result["changes"]["untracked"]] == ["w.txt"]
    assert facts(repo)["changes"]["untracked"] == []


def test_submodule_reported_not_descended(repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    commit_file(lib, "lib.txt", "v1\n")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    git(repo, "commit", "-q", "-m", "add submodule")
    result = facts(repo)
    assert result["repo"]["submodules"] == [{"path": "vendor/lib", "status": "clean"}]
    assert result["changes"]["counts"] == {"staged": 0, "unstaged": 0, "untracked": 0}

    checkout = repo / "vendor" / "lib"
    commit_file(checkout, "lib.txt", "v2\n")
    (checkout / "inner-untracked.txt").write_text("u")
    result = facts(repo)
    # git never descends into a submodule (it would run git there with the submodule's own
    # config): a new commit shows, untracked files inside it do not
    assert result["repo"]["submodules"] == [{"path": "vendor/lib", "status": "new-commits"}]
    assert [u["path"] for u in result["changes"]["unstaged"]] == ["vendor/lib"]
    assert result["changes"]["untracked"] == []  # nothing from inside the submodule


def test_uninitialised_submodule(repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    commit_file(lib, "lib.txt", "v1\n")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(repo, "commit", "-q", "-m", "add submodule")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert facts(clone)["repo"]["submodules"] == [{"path": "lib", "status": "uninitialized"}]


# ---- commits ------------------------------------------------------------------------------------


def test_last_ten_commits_newest_first_with_resume_unit_trailer(repo: Path) -> None:
    shas = []
    for i in range(12):
        message = f"step {i}"
        if i % 3 == 0:
            message += f"\n\nBody text.\n\nResume-Unit: doc-{i:03}"
        shas.append(commit_file(repo, "n.txt", f"{i}\n", message))
    commits = facts(repo)["recent_commits"]
    assert [c["sha"] for c in commits] == shas[::-1][:10]
    assert [c["subject"] for c in commits[:4]] == ["step 11", "step 10", "step 9", "step 8"]
    assert [c["unit"] for c in commits[:4]] == [None, None, "doc-009", None]


def test_commit_subject_is_redacted(repo: Path) -> None:
    commit_file(repo, "c.txt", "c\n", "use password=" + "hunter2xyz")
    assert facts(repo)["recent_commits"][0]["subject"] == "use password=[REDACTED:password]"


def test_not_a_repository_raises(tmp_path: Path) -> None:
    from resume_kit.infra.gitcmd import GitFailed

    with pytest.raises(GitFailed):
        read_git_facts(tmp_path, tmp_path / ".git", tmp_path / ".git")


# ---- parsers ------------------------------------------------------------------------------------


def test_parse_status_headers() -> None:
    data = (
        b"# branch.oid (initial)\0# branch.head (detached)\0# stash 3\0"
        b"# branch.future something\0garbage\0"
    )
    parsed = parse_status_v2(data)
    assert parsed == {
        "oid": None,
        "head": None,
        "upstream": None,
        "ahead": None,
        "behind": None,
        "stash": 3,
        "entries": [],
    }


def test_parse_numstat() -> None:
    data = b"1\t2\ta.txt\0-\t-\tbin.dat\0" + b"0\t0\t\0old name\0new name\0" + b"3\t0\tz\0"
    assert parse_numstat_z(data) == {
        "a.txt": (1, 2),
        "bin.dat": (None, None),
        "new name": (0, 0),
        "z": (3, 0),
    }


# Hypothesis: generated records serialised as git does, then parsed back.

_path_bytes = st.binary(min_size=1, max_size=30).filter(lambda b: b"\0" not in b)
_oid = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)
_xy_char = st.sampled_from(".MTADRCU")
_xy = st.tuples(_xy_char, _xy_char).map("".join)
_sub = st.one_of(
    st.just("N..."),
    st.tuples(st.sampled_from("C."), st.sampled_from("M."), st.sampled_from("U.")).map(
        lambda t: "S" + "".join(t)
    ),
)
_mode = st.sampled_from(["000000", "100644", "100755", "120000", "160000"])
_ref = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789/-_.", min_size=1, max_size=20)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


@st.composite
def _entry(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["1", "2", "u", "?", "!"]))
    path = _text(draw(_path_bytes))
    if kind in "?!":
        return {"kind": kind, "path": path}
    modes, hashes = (4, 3) if kind == "u" else (3, 2)
    entry: dict[str, Any] = {
        "kind": kind,
        "xy": draw(_xy),
        "sub": draw(_sub),
        "modes": draw(st.lists(_mode, min_size=modes, max_size=modes)),
        "hashes": draw(st.lists(_oid, min_size=hashes, max_size=hashes)),
        "path": path,
    }
    if kind == "2":
        entry["score"] = draw(st.sampled_from("RC")) + str(draw(st.integers(0, 100)))
        entry["orig_path"] = _text(draw(_path_bytes))
    return entry


@st.composite
def _status(draw: st.DrawFn) -> dict[str, Any]:
    upstream = draw(st.none() | _ref)
    has_ab = upstream is not None and draw(st.booleans())
    return {
        "oid": draw(st.none() | _oid),
        "head": draw(st.none() | _ref),
        "upstream": upstream,
        "ahead": draw(st.integers(0, 10**6)) if has_ab else None,
        "behind": draw(st.integers(0, 10**6)) if has_ab else None,
        "stash": draw(st.integers(0, 500)),
        "entries": draw(st.lists(_entry(), max_size=12)),
    }


def serialise(status: dict[str, Any]) -> bytes:
    """What ``git status --porcelain=v2 -z --branch --show-stash`` prints for ``status``."""

    def enc(text: str) -> bytes:
        return text.encode("utf-8", "surrogateescape")

    out = [
        b"# branch.oid " + enc(status["oid"] or "(initial)"),
        b"# branch.head " + enc(status["head"] or "(detached)"),
    ]
    if status["upstream"] is not None:
        out.append(b"# branch.upstream " + enc(status["upstream"]))
    if status["ahead"] is not None:
        out.append(b"# branch.ab +%d -%d" % (status["ahead"], status["behind"]))
    if status["stash"]:
        out.append(b"# stash %d" % status["stash"])
    for e in status["entries"]:
        if e["kind"] in "?!":
            out.append(enc(e["kind"] + " " + e["path"]))
            continue
        fields = [e["kind"], e["xy"], e["sub"], *e["modes"], *e["hashes"]]
        if e["kind"] == "2":
            fields.append(e["score"])
        out.append(enc(" ".join([*fields, e["path"]])))
        if e["kind"] == "2":
            out.append(enc(e["orig_path"]))
    return b"".join(record + b"\0" for record in out)


@settings(max_examples=300, deadline=None)
@given(_status())
def test_porcelain_v2_round_trip(status: dict[str, Any]) -> None:
    assert parse_status_v2(serialise(status)) == status


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_parser_never_raises_on_garbage(data: bytes) -> None:
    parse_status_v2(data)
    parse_numstat_z(data)


def test_parsed_real_output_round_trips(repo: Path) -> None:
    two_diverging_branches(repo)
    git(repo, "merge", "topic", check=False)
    git(repo, "mv", "README.md", "READ ME.md")
    (repo / "u.txt").write_text("u")
    raw = git(repo, "status", "--porcelain=v2", "-z", "--branch", "--show-stash").stdout.encode()
    parsed = parse_status_v2(raw)
    assert serialise(parsed) == raw
    assert {e["kind"] for e in parsed["entries"]} == {"2", "u", "?"}


# ---- what an operation in progress is about (issue 14.3) ----------------------------------------


def test_merge_conflict_names_the_branch_its_commit_and_subject(repo: Path) -> None:
    two_diverging_branches(repo)
    topic = git(repo, "rev-parse", "topic").stdout.strip()
    assert git(repo, "merge", "topic", check=False).returncode != 0
    result = facts(repo)
    detail = result["repo"]["operation_detail"]
    assert detail["kind"] == "merge" and detail["source"] == "topic"
    assert detail["commit"] == topic and detail["subject"] == "topic change"
    assert result["changes"]["counts"]["conflicted"] == 1


def test_rebase_stopped_at_step_two_of_three(repo: Path) -> None:
    commit_file(repo, "f.txt", "base\n", "base")
    git(repo, "checkout", "-q", "-b", "topic")
    commit_file(repo, "g1.txt", "1\n", "topic one")
    failing = commit_file(repo, "f.txt", "topic\n", "topic two touches f")
    commit_file(repo, "g3.txt", "3\n", "topic three")
    git(repo, "checkout", "-q", "main")
    onto = commit_file(repo, "f.txt", "main\n", "main change")
    git(repo, "checkout", "-q", "topic")
    assert git(repo, "rebase", "--merge", "main", check=False).returncode != 0
    detail = facts(repo)["repo"]["operation_detail"]
    assert (detail["step"], detail["steps"]) == (2, 3)
    assert detail["source"] == "topic"
    assert (detail["onto"], detail["onto_subject"]) == (onto, "main change")
    assert (detail["commit"], detail["subject"]) == (failing, "topic two touches f")


def test_apply_rebase_step_and_failed_commit(repo: Path) -> None:
    two_diverging_branches(repo)
    topic = git(repo, "rev-parse", "topic").stdout.strip()
    git(repo, "checkout", "-q", "topic")
    assert git(repo, "rebase", "--apply", "main", check=False).returncode != 0
    detail = facts(repo)["repo"]["operation_detail"]
    assert (detail["step"], detail["steps"], detail["commit"]) == (1, 1, topic)
    assert detail["subject"] == "topic change" and detail["onto_subject"] == "main change"


def test_stash_entries_with_their_messages_newest_first(repo: Path) -> None:
    for text in ("a\n", "b\n"):
        (repo / "README.md").write_text(text)
        git(repo, "stash", "push", "-q", "-m", f"try {text.strip()} token=ghp_{'aB3' * 12}")
    stashes = facts(repo)["repo"]["stashes"]
    assert [s["ref"] for s in stashes] == ["stash@{0}", "stash@{1}"]
    assert stashes[0]["message"].startswith("On main: try b")
    assert "ghp_" not in str(stashes)  # a stash message is repository text: redacted


def test_no_operation_and_no_stash_add_no_keys(repo: Path) -> None:
    repo_facts = facts(repo)["repo"]
    assert "operation_detail" not in repo_facts and "stashes" not in repo_facts


def test_a_hostile_git_dir_state_file_is_bounded_and_checked(repo: Path) -> None:
    two_diverging_branches(repo)
    assert git(repo, "merge", "topic", check=False).returncode != 0
    (repo / ".git" / "MERGE_MSG").write_text("Merge branch '" + "x" * 10 + "'\n" * 100_000)
    (repo / ".git" / "MERGE_HEAD").write_text("--output=/tmp/pwned\n")
    detail = facts(repo)["repo"]["operation_detail"]
    assert detail["source"] is None and detail["commit"] is None  # too big; not an id
