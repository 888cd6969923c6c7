"""Retained checkpoints: the controller keeps the last N completed snapshots and prunes
the older ones, as Flink keeps its last ``state.checkpoints.num-retained``.

After a snapshot completes, with ``retain`` set (``live up --retain N``), every snapshot
older than the N newest COMPLETED ones (FAILED ones too) goes: its manifest, its parts,
the chunks no retained snapshot's part refers to (an incremental one refers back to
chunks older snapshots wrote: those stay while it does), and its registry rows. Nothing
is pruned while a snapshot is open or a restore unfinished: an incremental in progress
may build on chunks only an older snapshot still lists. An object that cannot be
deleted keeps its snapshot's rows, so the next pruning tries again.

The run's logs are pruned then too (:func:`prune_logs`): each folder's base moves up to
the first action of a snapshot still registered, and the segments before it go.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .keyed_state import table_from_json
from .log_base import rebase
from .registry import (
    COMPLETED,
    DONE,
    IN_PROGRESS,
    INITIATED,
    PREPARING,
    RESUMING,
    SWITCHING,
    Registry,
    epoch_folder,
)
from .runlog import RunLogError
from .spec import ClusterSpec
from .storage import StorageError, delete, read

#: what reading a part's chunk table can raise (a part that is not one)
UNREADABLE = (StorageError, OSError, ValueError, KeyError, TypeError, AttributeError, IndexError)


@dataclass
class Pruned:
    """What one pruning did."""

    snapshots: list[str] = field(default_factory=list)
    objects: int = 0
    #: objects that could not be deleted (their snapshots stay registered)
    errors: list[str] = field(default_factory=list)
    #: the log folders whose base moved (:func:`prune_logs`)
    log_folders: list[str] = field(default_factory=list)


def prune(registry: Registry, retain: int) -> Pruned:
    """Prune every snapshot older than the ``retain`` newest COMPLETED ones (see the
    module docstring)."""
    done = Pruned()
    snapshots = registry.list()
    if any(s["status"] in (INITIATED, IN_PROGRESS) for s in snapshots):
        return done
    if registry.restores(PREPARING, SWITCHING, RESUMING):
        return done
    completed = [s for s in snapshots if s["status"] == COMPLETED]
    if len(completed) <= retain:
        return done
    oldest_kept = completed[-retain]["number"] if retain else None
    kept = [s for s in snapshots if oldest_kept is not None and s["number"] >= oldest_kept]
    older = [s for s in snapshots if s not in kept]
    still_used = set()
    try:
        for row in kept:
            # only a completed snapshot is restored or built on: a failed one's parts
            # need not be readable
            still_used |= _objects_of(registry, row, strict=row["status"] == COMPLETED)
    except UNREADABLE as e:
        # what a retained snapshot refers to is not known: nothing may go
        done.errors.append(f"a retained part cannot be read, nothing pruned: {e}")
        return done
    # only objects in a folder some snapshot was stored in go: a part names its chunks'
    # folders itself, and a part is not trusted to point anywhere else
    folders = {str(s["target_storage_uri"]) for s in snapshots}
    for row in older:
        objects = _objects_of(registry, row, strict=False) - still_used
        objects = {uri for uri in objects if uri.rpartition("/")[0] + "/" in folders}
        manifest = str(row["checkpoint_manifest_uri"] or "")
        failed = []
        # the manifest first: a pruning cut short leaves no restorable half
        for uri in sorted(objects, key=lambda u: (u != manifest, u)):
            try:
                delete(uri)
                done.objects += 1
            except StorageError as e:
                failed.append(str(e))
        if failed:
            done.errors += failed
        elif registry.forget(row["snapshot_id"]):
            done.snapshots.append(row["snapshot_id"])
    return done


def prune_logs(spec: ClusterSpec, registry: Registry, run_logs: Path, done: Pruned) -> None:
    """Move the base of each of this run's logs (its first epoch's in ``run_logs``, and
    each finished restore's beside it) up to the first action of a snapshot still
    registered (:func:`.log_base.rebase`), deleting the segments before it. Not while a
    restore is unfinished: it may be starting a folder's logs. A folder whose logs cannot
    be read is said in ``done.errors`` and left as it is."""
    if registry.restores(PREPARING, SWITCHING, RESUMING):
        return

    def registered() -> list[str]:
        return [str(s["snapshot_id"]) for s in registry.list()]

    # only this run's: an earlier run on the same registry may have had other nodes
    tag = f"{run_logs.name}-"
    mine = [r for r in registry.restores(DONE) if str(r["log_folder"]).startswith(tag)]
    epochs = [epoch_folder(r) for r in mine]
    folders = [(run_logs, False)]
    folders += [(run_logs.parent / name, True) for name in epochs if EPOCH.fullmatch(name)]
    for folder, restored in folders:
        if not folder.is_dir():
            continue
        try:
            if rebase(spec, folder, registered, restored=restored) is not None:
                done.log_folders.append(folder.name)
        except UNREADABLE_LOGS as e:
            done.errors.append(f"logs {folder}: {e}")


#: a restore's log folder (:func:`.registry.epoch_folder`), never a path elsewhere
EPOCH = re.compile(r"epoch-\d{3,}-[A-Za-z0-9_-]+")
#: what pruning a folder of logs can raise: logs that cannot be read or replayed, and a
#: base that cannot be written or a segment deleted
UNREADABLE_LOGS = (RunLogError, OSError)


def _objects_of(registry: Registry, row: dict[str, Any], *, strict: bool) -> set[str]:
    """Every stored object of a snapshot: its manifest, its parts, their chunks (with
    ``strict``, a part that cannot be read raises; else its chunks are left alone)."""
    sid = str(row["snapshot_id"])
    found = {str(row["checkpoint_manifest_uri"])} if row["checkpoint_manifest_uri"] else set()
    for part in registry.parts(sid):
        if part["ok"] and part["part_uri"]:
            found.add(str(part["part_uri"]))
            try:
                found |= set(_chunks_of(str(part["part_uri"]), str(part["node_id"])))
            except UNREADABLE:
                if strict:
                    raise
    return found


def _chunks_of(part_uri: str, node_id: str) -> Iterable[str]:
    """The chunk URIs a part lists."""
    state = json.loads(read(part_uri)).get("state") or {}
    return [uri for _, uri in table_from_json(node_id, state).values()]
