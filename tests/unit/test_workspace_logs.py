"""Error-line extraction and bounded log reading, on real output shapes and real files."""

from __future__ import annotations

import os
import time
from pathlib import Path

from resume_kit.facts.logs import error_lines, read_logs, read_tail

PY_TRACEBACK = """\
INFO starting batch
Traceback (most recent call last):
  File "/work/run.py", line 12, in <module>
    main()
  File "/work/run.py", line 8, in main
    log.error("about to extract")
  File "src/extract.py", line 88, in extract
    return record['party_b']
           ~~~~~~^^^^^^^^^^^
KeyError: 'party_b'
INFO shutting down
"""


def test_python_traceback_gives_last_frame_and_exception() -> None:
    assert error_lines(PY_TRACEBACK) == [
        'File "src/extract.py", line 88, in extract',
        "KeyError: 'party_b'",
    ]


def test_chained_tracebacks_give_each_last_frame() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "a.py", line 1, in f\n'
        "    x()\n"
        "ValueError: bad\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "b.py", line 2, in g\n'
        "    raise RuntimeError('worse')\n"
        "RuntimeError: worse\n"
    )
    assert error_lines(text) == [
        'File "a.py", line 1, in f',
        "ValueError: bad",
        'File "b.py", line 2, in g',
        "RuntimeError: worse",
    ]


PYTEST_OUTPUT = """\
============================= test session starts ==============================
collected 3 items

tests/test_extract.py .F.                                                [100%]

=================================== FAILURES ===================================
_________________________________ test_party_b _________________________________

    def test_party_b():
>       assert extract("001")["party_b"] == "ACME"
E       AssertionError: assert 'ACM' == 'ACME'
E         - ACME
E         + ACM

tests/test_extract.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_extract.py::test_party_b - AssertionError: assert 'ACM' == 'ACME'
ERROR tests/test_other.py - ModuleNotFoundError: No module named 'nope'
========================= 1 failed, 2 passed, 1 error in 0.05s =================
"""


def test_pytest_output() -> None:
    assert error_lines(PYTEST_OUTPUT) == [
        "E       AssertionError: assert 'ACM' == 'ACME'",
        "E         - ACME",
        "E         + ACM",
        "tests/test_extract.py:7: AssertionError",
        "FAILED tests/test_extract.py::test_party_b - AssertionError: assert 'ACM' == 'ACME'",
        "ERROR tests/test_other.py - ModuleNotFoundError: No module named 'nope'",
        "1 failed, 2 passed, 1 error in 0.05s",  # the summary line, its rules stripped
    ]


def test_npm_output_deduplicated() -> None:
    text = (
        "> app@1.0.0 build\n"
        "> tsc\n"
        "src/index.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"
        "npm ERR! code ELIFECYCLE\n"
        "npm ERR! errno 2\n"
        "npm ERR! code ELIFECYCLE\n"
        "npm ERR! A complete log of this run can be found in: /tmp/npm.log\n"
    )
    assert error_lines(text) == [
        "src/index.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
        "npm ERR! errno 2",
        "2 × npm ERR! code ELIFECYCLE (output lines 4-6)",  # grouped where its last copy is
        "npm ERR! A complete log of this run can be found in: /tmp/npm.log",
    ]


def test_rustc_output_keeps_location_line() -> None:
    text = (
        "   Compiling demo v0.1.0 (/work/demo)\n"
        "error[E0308]: mismatched types\n"
        " --> src/main.rs:4:18\n"
        "  |\n"
        '4 |     let x: i32 = "a";\n'
        "  |            ---   ^^^ expected `i32`, found `&str`\n"
        "\n"
        'error: could not compile `demo` (bin "demo") due to 1 previous error\n'
        "thread 'main' panicked at src/main.rs:2:5:\n"
        "warning: unused variable: `y`\n"
    )
    assert error_lines(text) == [
        "error[E0308]: mismatched types",
        "--> src/main.rs:4:18",
        'error: could not compile `demo` (bin "demo") due to 1 previous error',
        "thread 'main' panicked at src/main.rs:2:5:",
    ]


def test_compiler_and_log_level_markers() -> None:
    text = (
        "src/a.c:3:5: error: expected ';' before '}' token\n"
        "2026-11-29 08:00:01 ERROR worker-3 could not open out/001.json\n"
        "2026-11-29 08:00:02 FATAL shutting down\n"
        "fatal: not a git repository (or any of the parent directories): .git\n"
        "Build finished with 0 errors\n"
        "all good, no errors\n"
        "INFO done\n"
    )
    assert error_lines(text) == [
        "src/a.c:3:5: error: expected ';' before '}' token",
        "2026-11-29 08:00:01 ERROR worker-3 could not open out/001.json",
        "2026-11-29 08:00:02 FATAL shutting down",
        "fatal: not a git repository (or any of the parent directories): .git",
    ]


def test_ordinary_output_gives_nothing() -> None:
    text = "collected 3 items\n\ntests/test_a.py ...  [100%]\n==== 3 passed in 0.01s ====\n"
    assert error_lines(text) == []
    assert error_lines("") == []


def test_ansi_colours_and_carriage_returns_are_cleaned() -> None:
    text = "\x1b[31mERROR\x1b[0m boom\nprogress 10%\rprogress 50%\rerror: disk full\n"
    assert error_lines(text) == ["ERROR boom", "error: disk full"]


def test_secrets_are_redacted_before_trimming() -> None:
    token = "ghp_" + "aB3" * 12
    long_prefix = "x" * 290
    lines = error_lines(f"ERROR auth failed with {token}\nERROR {long_prefix} {token}\n")
    assert lines[0] == "ERROR auth failed with [REDACTED:github-token]"
    assert "ghp_" not in "".join(lines) and "aB3aB3" not in "".join(lines)


def test_long_lines_are_trimmed_keeping_file_references() -> None:
    line = "ERROR " + "y" * 400 + " at src/deep/module.py:123"
    (out,) = error_lines(line)
    assert len(out) < 360
    assert out.endswith("(src/deep/module.py:123)")


def test_max_lines_keeps_first_quarter_and_the_end() -> None:
    text = "".join(f"ERROR number {i}\n" for i in range(100))
    out = error_lines(text, max_lines=8)
    assert out == [f"ERROR number {i}" for i in (0, 1, 94, 95, 96, 97, 98, 99)]
    assert error_lines(text, max_lines=0) == []


def test_near_identical_lines_are_grouped_with_a_count_and_range() -> None:
    lines = [
        f"boltons/iterutils.py:{184 + 50 * i}: error: Function is missing a type annotation"
        "  [no-untyped-def]"
        for i in range(20)
    ]
    lines.insert(3, 'boltons/iterutils.py:300: error: Name "x" is not defined  [name-defined]')
    text = "\n".join([*lines, "Found 80 errors in 1 file (checked 1 source file)"]) + "\n"
    assert error_lines(text) == [
        'boltons/iterutils.py:300: error: Name "x" is not defined  [name-defined]',
        "20 × error: Function is missing a type annotation  [no-untyped-def]"
        " (boltons/iterutils.py lines 184-1134)",
        "Found 80 errors in 1 file (checked 1 source file)",
    ]
    spread = "a.py:1: error: missing\nb.py:2: error: missing\n"
    assert error_lines(spread) == ["2 × error: missing (2 files)"]


def test_summary_lines_survive_the_cut() -> None:
    noise = "".join(f"src/m{i}.py:{i}: error: problem number {i}\n" for i in range(200))
    mypy = error_lines("Found 200 errors in 200 files (checked 300 source files)\n" + noise, 8)
    assert len(mypy) == 8 and mypy[0] == "Found 200 errors in 200 files (checked 300 source files)"
    pytest_tail = noise + "=========== 34 failed, 2 passed in 3.21s ===========\n" + noise
    out = error_lines(pytest_tail, max_lines=6)
    assert len(out) == 6 and "34 failed, 2 passed in 3.21s" in out
    assert error_lines("==== 3 passed in 0.01s ====\n") == []


def test_the_newest_traceback_keeps_its_exception_line() -> None:
    # The same crash twice (a retry), then the log's other errors: the de-duplication used to
    # keep the first copies only, so the newest traceback had no KeyError line left.
    other = "".join(f"ERROR record {i} skipped\n" for i in range(50))
    out = error_lines(PY_TRACEBACK + other + PY_TRACEBACK, max_lines=8)
    assert out[-2:] == [
        '2 × File "src/extract.py", line 88, in extract (output lines 7-68)',
        "2 × KeyError: 'party_b' (output lines 10-71)",
    ]


def test_ansi_is_stripped_before_grouping() -> None:
    text = "\x1b[1m\x1b[31ma.py:3: error:\x1b[0m bad\n\x1b[31ma.py:9: error:\x1b[0m bad\n"
    assert error_lines(text) == ["2 × error: bad (a.py lines 3-9)"]


# ---- files --------------------------------------------------------------------------------------


def test_read_logs_newest_first_skips_binary_and_state_dirs(tmp_path: Path) -> None:
    root = tmp_path
    (root / "logs" / "sub").mkdir(parents=True)
    (root / "old.log").write_text("ERROR old failure\n")
    (root / "logs" / "sub" / "new.log").write_text(PY_TRACEBACK)
    (root / "binary.log").write_bytes(b"ERROR \x00\x01\x02 not text\n")
    (root / ".resume-kit" / "runs").mkdir(parents=True)
    (root / ".resume-kit" / "runs" / "x.log").write_text("ERROR tool's own\n")
    now = time.time()
    os.utime(root / "old.log", (now - 100, now - 100))
    os.utime(root / "logs" / "sub" / "new.log", (now, now))

    logs = read_logs(root, ["*.log", "logs/**/*.log", "**/*.log"])
    assert [entry["path"] for entry in logs] == ["logs/sub/new.log", "old.log"]
    assert logs[0]["error_lines"] == [
        'File "src/extract.py", line 88, in extract',
        "KeyError: 'party_b'",
    ]
    assert logs[1] == {
        "path": "old.log",
        "size": len("ERROR old failure\n"),
        "mtime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 100)),
        "error_lines": ["ERROR old failure"],
    }
    assert read_logs(root, ["*.log", "logs/**/*.log"], max_files=1)[0]["path"] == "logs/sub/new.log"
    assert read_logs(root, []) == []
    assert read_logs(root, ["nothing/*.log"]) == []


def test_big_log_reads_only_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    head = "ERROR early failure that is far from the end\n"
    filler = "INFO " + "z" * 94 + "\n"  # 100 bytes a line
    with log.open("w") as handle:
        handle.write(head)
        for _ in range(50_000):  # 5 MB
            handle.write(filler)
        handle.write("ERROR late failure\n")
    assert log.stat().st_size > 5_000_000

    (entry,) = read_logs(tmp_path, ["*.log"], tail_bytes=64 * 1024)
    assert entry["error_lines"] == ["ERROR late failure"]
    assert entry["size"] == log.stat().st_size

    tail = read_tail(log, 1000)
    assert tail is not None
    assert len(tail) <= 1000
    assert tail.startswith(b"INFO ")  # the partial first line is dropped


def test_binary_tail_and_invalid_utf8(tmp_path: Path) -> None:
    (tmp_path / "b.log").write_bytes(b"\x00" * 10 + b"ERROR x\n")
    (tmp_path / "latin.log").write_bytes(b"ERROR caf\xe9 failed\n")
    logs = read_logs(tmp_path, ["*.log"])
    assert [entry["path"] for entry in logs] == ["latin.log"]
    assert logs[0]["error_lines"] == ["ERROR caf\ufffd failed"]


def test_a_full_tail_of_one_line_repeated_is_one_entry() -> None:
    # The scan's cost is measured in bench/, not timed here; what a 256 KiB tail gives is.
    ordinary = "2026-11-29 08:00:00 INFO processed doc-001 in 0.12s, 3 parties found\n" * 3700
    noisy = "2026-11-29 ERROR failed doc-001 at src/a.py:12 KeyError\n" * 4500
    assert error_lines(ordinary) == error_lines("a" * 262_144) == []
    assert error_lines(noisy) == [
        "4500 × 2026-11-29 ERROR failed doc-001 at src/a.py:12 KeyError (output lines 1-4500)"
    ]
