"""The commands that share units between agents: claim, release, leases, and the hidden merge
driver git calls for progress.yaml."""

from __future__ import annotations

from typing import Annotated

import typer

from resume_kit.cli.params import PLAIN, JsonOpt, exit_with

app = typer.Typer()

RemoteOpt = Annotated[
    str | None,
    typer.Option(
        "--remote",
        metavar="NAME",
        help="The git remote the leases live on (default: origin when there is one, else this "
        "clone's own refs, which its worktrees share).",
    ),
]
OfflineOpt = Annotated[
    bool,
    typer.Option("--offline", help="Use this clone's own refs (the local lock), not the remote."),
]


@app.command()
def claim(
    unit_id: Annotated[
        str | None,
        typer.Argument(
            metavar="[ID]", click_type=PLAIN, help="The unit (default: the next ready unit)."
        ),
    ] = None,
    remote: RemoteOpt = None,
    ttl: Annotated[
        str,
        typer.Option(
            "--ttl", metavar="DURATION", help="How long the lease lasts unless renewed (15m)."
        ),
    ] = "15m",
    offline: OfflineOpt = False,
) -> None:
    """Lease a unit so no other agent works on it: exit 0 when you hold it, 5 when someone
    else does (the line names them and the expiry), 2 when the remote cannot be reached."""
    from resume_kit.cli.commands import leases as cmd

    exit_with(cmd.claim(unit_id, remote, ttl, offline))


@app.command()
def release(
    unit_id: Annotated[str, typer.Argument(metavar="ID", click_type=PLAIN, help="The unit.")],
    remote: RemoteOpt = None,
    offline: OfflineOpt = False,
) -> None:
    """Give up your lease on a unit (exit 5 when the lease is someone else's)."""
    from resume_kit.cli.commands import leases as cmd

    exit_with(cmd.release(unit_id, remote, offline))


@app.command()
def leases(
    remote: RemoteOpt = None,
    offline: OfflineOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """List who leases which unit (fetched from the remote; --offline: what is known here)."""
    from resume_kit.cli.commands import leases as cmd

    exit_with(cmd.list_leases(remote, offline, json_out))


@app.command("merge-driver", hidden=True)
def merge_driver(
    base: Annotated[
        str, typer.Argument(metavar="BASE", click_type=PLAIN, help="The common ancestor (%O).")
    ],
    ours: Annotated[
        str, typer.Argument(metavar="OURS", click_type=PLAIN, help="Our side, the result (%A).")
    ],
    theirs: Annotated[
        str, typer.Argument(metavar="THEIRS", click_type=PLAIN, help="Their side (%B).")
    ],
    marker_size: Annotated[
        str, typer.Argument(metavar="SIZE", click_type=PLAIN, help="Conflict marker size (%L).")
    ] = "7",
) -> None:
    """git's merge driver for progress.yaml (`hook install` registers it): merges by unit."""
    from resume_kit.cli.commands import merge_driver as cmd

    exit_with(cmd.run(base, ours, theirs, int(marker_size) if marker_size.isdigit() else 7))
