"""Read-only commit procedures beyond :mod:`.commits`: ``show_commit_extra_metadata`` (the
``extraMetadata`` map of one completed commit) and ``commits_compare`` (how far a table's
commits are ahead of, or behind, another copy of it).

Parameters and output columns are Hudi's (``ShowCommitExtraMetadataProcedure`` and
``CommitsCompareProcedure`` in ``hudi-spark-datasource``, ``command/procedures``); as in
:mod:`.commits`, ``show_commit_extra_metadata`` also takes ``path`` after Hudi's own
parameters, so ``table`` is optional there. Both read only timeline files, on the driver.

Hudi's "commits timeline" here is the completed commits, deltacommits and replacecommits
(a completed compaction is a commit, a completed clustering a replacecommit), ordered by
requested time: :meth:`hudilite.timeline.timeline.Timeline.commits`.
"""

from __future__ import annotations

from typing import Any

from hudilite.errors import HudiliteError
from hudilite.table.api import Table
from hudilite.tablestate.state import TableState

from .commits import _completed_commit
from .registry import Output, Param, ProcedureContext, ProcedureError, procedure

# ---------------------------------------------------------------------------------------
# show_commit_extra_metadata


@procedure(
    "show_commit_extra_metadata",
    [
        Param("table", "string"),
        Param("limit", "integer", default=100),
        Param("instant_time", "string"),
        Param("metadata_key", "string"),
        Param("path", "string"),
    ],
    [
        Output("instant_time"),
        Output("action"),
        Output("metadata_key"),
        Output("metadata_value"),
    ],
    "Shows the extra metadata (schema, checkpoints, ...) of a completed commit (default: the "
    "latest), one row per key.",
    read_only=True,
)
def show_commit_extra_metadata(
    ctx: ProcedureContext, args: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """One row per ``extraMetadata`` entry of the commit, sorted by key (Hudi prints its
    Java HashMap's order, which follows key hashes); with ``metadata_key`` (trimmed, exact
    match) only that entry; the first ``limit``."""
    state = ctx.table(args).state()
    if args["instant_time"] is None or not str(args["instant_time"]).strip():
        commits = state.timeline.commits()
        if not commits:
            raise ProcedureError(
                f"{ctx.procedure}: {state.gw.abs_path('')} has no completed commit"
            )
        instant = max(commits, key=lambda i: i.requested_time)
        meta = state.timeline.commit_metadata(instant)
    else:
        instant, meta = _completed_commit(ctx, state, args["instant_time"])
    extra = meta.extra_metadata
    key = args["metadata_key"]
    keys = sorted(extra) if key is None else [k for k in extra if k == str(key).strip()]
    rows = [(instant.requested_time, instant.action, k, extra[k]) for k in keys]
    return rows[: max(args["limit"], 0)]


# ---------------------------------------------------------------------------------------
# commits_compare


def _latest(state: TableState) -> str:
    """The newest completed commit's requested time, ``"0"`` when there is none (Hudi's)."""
    return max((i.requested_time for i in state.timeline.commits()), default="0")


def _after(state: TableState, time: str) -> list[str]:
    """Requested times of the completed commits requested after ``time``, oldest first."""
    return sorted(i.requested_time for i in state.timeline.commits() if i.requested_time > time)


@procedure(
    "commits_compare",
    [Param("table", "string", required=True), Param("path", "string", required=True)],
    [Output("compare_detail")],
    "Compares the table's completed commits with those of the table at path: how many "
    "commits the table is ahead or behind, and which.",
    read_only=True,
)
def commits_compare(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row, Hudi's sentence: ``Source <name> is behind by <n> commits. Commits to catch
    up - [<t1>, <t2>]`` when the table at ``path`` (the target) has a newer latest commit,
    else ``is ahead by`` with the table's commits after the target's latest (``0`` commits
    and ``[]`` when they are level). ``<name>`` is the source's ``hoodie.table.name``."""
    source = ctx.table({"table": args["table"]}).state()
    try:
        target = Table.load(ctx.spark, str(args["path"])).state()
    except HudiliteError as exc:
        raise ProcedureError(
            f"{ctx.procedure}: path {args['path']!r} is not a Hudi table ({exc})"
        ) from None
    source_latest, target_latest = _latest(source), _latest(target)
    if target_latest > source_latest:
        times, how = _after(target, source_latest), "behind"
    else:
        times, how = _after(source, target_latest), "ahead"
    return [
        (
            f"Source {source.config.name} is {how} by {len(times)} commits. "
            f"Commits to catch up - [{', '.join(times)}]",
        )
    ]
