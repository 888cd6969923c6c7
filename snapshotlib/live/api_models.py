"""The live controller's REST messages: what each call takes and answers, and one
message naming every invalid field of a refused request.

Every request body forbids fields it does not know and takes no coercion
(``strict``): a typo or a string where a number goes is refused, naming the field.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from .registry import STATUSES

SnapshotType = Literal["full", "incremental"]
Status = Literal["INITIATED", "IN_PROGRESS", "COMPLETED", "FAILED"]


# ------------------------------------------------------------------ messages
class TriggerRequest(BaseModel):
    """Start a snapshot at a node."""

    model_config = ConfigDict(extra="forbid", strict=True)

    initiated_by_node_id: str = Field(description="the node that initiates", examples=["P3"])
    snapshot_type: SnapshotType = Field(examples=["full"])
    target_storage_uri: str | None = Field(
        default=None,
        description="directory for the parts and manifest; the controller's default if omitted",
        examples=["file:///var/snapshots/"],
    )


class TriggerAnswer(BaseModel):
    snapshot_id: str
    status: Status
    initiated_at: str
    estimated_completion_ms: int


class PartReport(BaseModel):
    """A node's report that its part of a snapshot is written (or could not be)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    node_id: str
    part_uri: str = ""
    size_bytes: int = Field(default=0, ge=0, le=2**53)
    ok: bool
    error: str | None = None


class PartAnswer(BaseModel):
    snapshot_id: str
    node_id: str
    #: False when the node had reported already (its first report is kept)
    recorded: bool
    status: Status
    error: str | None


class Heartbeat(BaseModel):
    """A node's heartbeat: it is alive, in ``epoch``, buffering this much for snapshots."""

    model_config = ConfigDict(extra="forbid", strict=True)

    node_id: str
    incarnation: str = Field(max_length=200)
    epoch: int = Field(ge=-1, le=2**53)
    awaiting_restore: bool = False
    balance: int = Field(ge=-(2**53), le=2**53)
    buffered_messages: int = Field(ge=0, le=2**53)
    buffered_bytes: int = Field(ge=0, le=2**53)
    open_snapshots: list[str] = Field(default_factory=list, max_length=10_000)
    leaving: bool = False


class HeartbeatAnswer(BaseModel):
    #: membership changes this heartbeat made (a join), described
    changes: list[str]


class NodeRestored(BaseModel):
    node_id: str
    #: after the recorded channel messages were delivered to it
    balance: int
    reinjected: int


class RestoreAnswer(BaseModel):
    snapshot_id: str
    epoch: int
    log_folder: str
    duration_ms: int
    total_money: int
    nodes: list[NodeRestored]
    #: snapshots that were in progress, failed by the restore
    failed: list[str]


class NodeCleanup(BaseModel):
    node_id: str
    abandoned: bool | None
    freed_messages: int | None
    freed_bytes: int | None
    error: str | None = None


class CleanupView(BaseModel):
    snapshot_id: str
    nodes: list[NodeCleanup]


class CrashAnswer(BaseModel):
    node_id: str
    detail: str


class SnapshotView(BaseModel):
    snapshot_id: str
    status: Status
    duration_ms: int | None
    total_size_bytes: int | None
    nodes_completed: int
    nodes_failed: int
    checkpoint_manifest_uri: str | None
    #: the SHA-256 of the manifest's bytes, kept when it completed: what a check of the
    #: snapshot compares the stored manifest with
    checkpoint_manifest_sha256: str | None = None
    initiated_by_node_id: str
    snapshot_type: str
    initiated_at: str
    completed_at: str | None
    target_storage_uri: str
    error: str | None


class SnapshotList(BaseModel):
    snapshots: list[SnapshotView]


class NodeView(BaseModel):
    id: str
    address: str
    health: str
    epoch: int | None = None
    buffered_messages: int | None = None
    buffered_bytes: int | None = None
    heard_ms_ago: int | None = None
    #: from its last heartbeat: its balance, and the snapshots it is recording
    balance: int | None = None
    open_snapshots: list[str] | None = None


class ClusterView(BaseModel):
    nodes: list[NodeView]
    channels: list[str]
    rate: float
    markers: str
    marker_delay_ms: int
    total_money: int
    heartbeat_ms: int
    heartbeat_timeout_ms: int
    ttl_ms: int


class ErrorAnswer(BaseModel):
    detail: str


#: request bodies by route path, to list the allowed fields when an extra one is sent
BODIES: dict[str, type[BaseModel]] = {
    "/v1/snapshots/trigger": TriggerRequest,
    "/internal/v1/snapshots/{snapshot_id}/parts": PartReport,
    "/internal/v1/heartbeats": Heartbeat,
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorAnswer} for code in (401, 403, 404, 409, 422, 503)
}


def describe_errors(errors: Sequence[Any], fields: Sequence[str] = ()) -> str:
    """One message naming each invalid field, from pydantic's error list.

    >>> describe_errors([{"type": "literal_error", "loc": ("body", "snapshot_type"),
    ...     "msg": "Input should be 'full' or 'incremental'", "input": "partial"}])
    "snapshot_type: must be 'full' or 'incremental', got 'partial'"
    """
    messages: list[str] = []
    for error in errors:
        loc = [str(p) for p in error.get("loc", ())]
        kind = error.get("type", "")
        value = error.get("input")
        if kind == "json_invalid":
            reason = (error.get("ctx") or {}).get("error", "")
            messages.append(f"body: not valid JSON ({reason})")
            continue
        field = ".".join(loc[1:]) or (loc[0] if loc else "request")
        if kind == "missing":
            text = "required"
            if field == "body" and fields:
                text = f"required: a JSON object with {', '.join(fields)}"
        elif kind == "extra_forbidden":
            text = "not a field of this request"
            if fields:
                text += f" (fields: {', '.join(fields)})"
        elif kind in ("model_attributes_type", "model_type", "dict_type"):
            text = f"must be a JSON object, got {_show(value)}"
        else:
            message = str(error.get("msg", "invalid"))
            text = message.replace("Input should be", "must be", 1) + f", got {_show(value)}"
        messages.append(f"{field}: {text}")
    return "; ".join(messages) or "invalid request"


def _show(value: Any) -> str:
    """A short rendering of a rejected value, as JSON where it is JSON."""
    if isinstance(value, str):
        text = repr(value)
    elif isinstance(value, (bytes, bytearray)):
        text = repr(bytes(value[:60]))
    elif isinstance(value, dict):
        return "an object"
    elif isinstance(value, (list, tuple)):
        return "a list"
    else:
        try:
            text = json.dumps(value)
        except (TypeError, ValueError):
            text = type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


# the query filter and the registry accept the same statuses
assert get_args(Status) == STATUSES
