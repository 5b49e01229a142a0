"""Where the agents' brief hooks start: ``python -I -S <this file> brief --format claude-hook``.

`resume-kit integrate` writes that command (integrations/settings.py) when this interpreter runs
this file that way. ``-S`` skips the site-packages start-up, ~1.5 ms of the ~20 ms a served
brief takes on a small tree (measured 2026-12-07): the served brief (brief/fastpath.py) needs
the standard library only, and a brief that must be built loads site-packages first
(:func:`resume_kit.cli.app.main`). ``-I`` keeps the current folder (a cloned repository's
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
    from resume_kit.cli.app import entry

    entry(serve_first=False)


if __name__ == "__main__":
    main()
