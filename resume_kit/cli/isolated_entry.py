"""Where the agents' hooks start: ``python -I -S <this file> brief --format claude-hook`` (the
brief hooks) and ``python -I <this file> hook-tool pre|post`` (the tool hooks).

`resume-kit integrate` writes those commands (integrations/settings.py) when this interpreter
runs this file that way. ``-S`` skips the site-packages start-up, ~1.5 ms of the ~20 ms a served
brief takes on a small tree (measured 2026-12-07): the served brief (brief/fastpath.py) needs
the standard library only, and a brief that must be built loads site-packages first
(:func:`resume_kit.cli.app.main`). A tool hook keeps site-packages (past its fast path it may
read config.yaml with PyYAML); started by path rather than ``-m`` it skips runpy, ~6 ms of every
shell call's two hooks each (2026-12-07). ``-I`` keeps the current folder (a cloned repository's
``resume_kit/`` or ``json.py``) and ``PYTHON*`` variables off ``sys.path``; this file adds
the folder holding its own package, after the standard library.

Standard library only.
"""

import os
import sys


def main() -> None:
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    sys.path.append(os.path.dirname(package))
    sys.argv[0] = "resume-kit"
    if sys.argv[1:2] == ["brief"]:  # served without the CLI's modules: ~0.5 ms less
        from resume_kit.brief.fastpath import serve

        served = serve(sys.argv[1:])
        if served is not None:
            from resume_kit.cli.process_end import end_process

            end_process(served)
    if sys.argv[1:2] == ["hook-tool"]:  # fails open: any error is one line and status 0
        from resume_kit.cli.process_end import end_process
        from resume_kit.integrations.tool_hook import main as tool_hook

        end_process(tool_hook(sys.argv[2:]))
    from resume_kit.cli.app import entry

    entry(serve_first=False)


if __name__ == "__main__":
    main()
