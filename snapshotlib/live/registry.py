"""The snapshot registry: what the controller knows about each snapshot and its parts.

Written on SQLAlchemy Core, so the same statements run on SQLite (the default, one file
next to the cluster) and on PostgreSQL (``postgresql+psycopg://user@host:port/database``,
with the ``psycopg`` driver of the ``live`` extra). Every method is one transaction: a
crash leaves each row as it was before the call or as the call left it, never
half-written.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from typing import Any, Final

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Engine,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    func,
    select,
    text,
    update,
)
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

INITIATED: Final = "INITIATED"
IN_PROGRESS: Final = "IN_PROGRESS"
COMPLETED: Final = "COMPLETED"
FAILED: Final = "FAILED"
#: every status, in the order a snapshot can pass through them
STATUSES = (INITIATED, IN_PROGRESS, COMPLETED, FAILED)
#: statuses a snapshot never leaves
FINAL = (COMPLETED, FAILED)

#: a restore's statuses: its nodes fetch and check their parts (nothing changed yet)...
PREPARING: Final = "PREPARING"
#: ...every node was ready and the controller decided: they switch epoch...
SWITCHING: Final = "SWITCHING"
#: ...every node switched: they are resumed...
RESUMING: Final = "RESUMING"
#: ...every node runs again; or the restore was given up (before the decision, or a
#: node lost what it was switched to)
DONE: Final = "DONE"
ABORTED: Final = "ABORTED"
RESTORE_STATUSES = (PREPARING, SWITCHING, RESUMING, DONE, ABORTED)

metadata = MetaData()

snapshots_table = Table(
    "snapshots",
    metadata,
    Column("snapshot_id", String(64), primary_key=True),
    # the running number in the id: orders snapshots and makes the next id
    Column("number", Integer, nullable=False, unique=True),
    Column("status", String(16), nullable=False),
    Column("snapshot_type", String(16), nullable=False),
    Column("initiated_by_node_id", String(255), nullable=False),
    Column("target_storage_uri", Text, nullable=False),
    Column("initiated_at", String(32), nullable=False),
    # wall-clock time_ns at the trigger: a duration still makes sense after a restart
    Column("started_ns", BigInteger, nullable=False),
    Column("completed_at", String(32)),
    Column("duration_ms", BigInteger),
    Column("total_size_bytes", BigInteger),
    # defaults in the table too, for rows written by other tools (psql, a migration)
    Column("nodes_completed", Integer, nullable=False, default=0, server_default=text("0")),
    Column("nodes_failed", Integer, nullable=False, default=0, server_default=text("0")),
    Column("checkpoint_manifest_uri", Text),
    # why a FAILED snapshot failed
    Column("error", Text),
)

parts_table = Table(
    "parts",
    metadata,
    Column("snapshot_id", String(64), ForeignKey("snapshots.snapshot_id"), primary_key=True),
    Column("node_id", String(255), primary_key=True),
    Column("part_uri", Text, nullable=False),
    Column("size_bytes", BigInteger, nullable=False),
    Column("ok", Boolean, nullable=False),
    Column("error", Text),
    Column("reported_at", String(32), nullable=False),
)
#: each completed snapshot's manifest's SHA-256: a manifest rewritten in its store (where
#: whoever may write parts may write it too) is refused by a restore
manifests_table = Table(
    "manifests",
    metadata,
    Column("snapshot_id", String(64), ForeignKey("snapshots.snapshot_id"), primary_key=True),
    Column("sha256", String(64), nullable=False),
)

#: a snapshot's row as the registry answers it: its columns, and its manifest's SHA-256
#: once completed (None before, and for a snapshot completed before the hash was kept)
SNAPSHOT_ROWS = select(
    snapshots_table, manifests_table.c.sha256.label("checkpoint_manifest_sha256")
).select_from(
    snapshots_table.outerjoin(
        manifests_table, manifests_table.c.snapshot_id == snapshots_table.c.snapshot_id
    )
)

#: the restore log: a controller that dies mid-restore finds here what it had decided
restores_table = Table(
    "restores",
    metadata,
    Column("epoch", BigInteger, primary_key=True, autoincrement=False),
    # no foreign key: the log outlives snapshots pruned by retention (its epochs are
    # drawn above every one it holds)
    Column("snapshot_id", String(64), nullable=False),
    Column("log_folder", String(64), nullable=False),
    Column("status", String(16), nullable=False),
    Column("started_at", String(32), nullable=False),
    Column("finished_at", String(32)),
    Column("error", Text),
)

#: columns :meth:`Registry.update` may set
UPDATABLE = frozenset(c.name for c in snapshots_table.columns) - {"snapshot_id", "number"}

#: the driver a ``postgresql://`` URL that names none gets (see :func:`_engine_url`)
POSTGRES_DRIVER: Final = "psycopg"
#: seconds to wait for a PostgreSQL server to accept a connection, unless the URL sets
#: ``connect_timeout``: an unreachable host is reported instead of hanging the controller
CONNECT_TIMEOUT_S: Final = 10
#: key of the advisory lock under which the tables are created on PostgreSQL
_SCHEMA_LOCK: Final = 0x736E6170  # "snap"
#: key of the advisory lock under which a new snapshot's number is drawn on PostgreSQL
_NUMBER_LOCK: Final = 0x736E6171


class RegistryError(ValueError):
    """A registry that cannot be opened, or a call with a wrong argument, naming it."""


class AlreadyRegistered(RegistryError):
    """A snapshot id or number that another writer registered first."""


class Registry:
    """Snapshots and their parts in a database at ``url``; tables are created if missing.

    >>> r = Registry("sqlite://")
    >>> r.next_number()
    1
    """

    def __init__(self, url: str) -> None:
        try:
            parsed = _engine_url(make_url(url))
        except ArgumentError as e:
            raise RegistryError(
                f"registry_url: expected a database URL such as sqlite:////abs/registry.db "
                f"or postgresql+psycopg://user@host:5432/database, got {url!r} ({e})"
            ) from None
        # the URL as shown in messages: never its password
        shown = parsed.render_as_string(hide_password=True)
        self._engine = _create_engine(parsed, shown)
        if self._engine.dialect.name == "sqlite":
            event.listen(self._engine, "connect", _sqlite_pragmas)
        try:
            with self._engine.begin() as conn:
                _create_tables(conn)
        except SQLAlchemyError as e:
            self._engine.dispose()
            raise RegistryError(
                f"registry_url: cannot open {shown!r}: {_reason(e)}{_advice(parsed)}"
            ) from None
        self.url = url

    @property
    def engine(self) -> Engine:
        return self._engine

    def close(self) -> None:
        """Close the database connections (the registry reconnects if used again)."""
        self._engine.dispose()

    # ---------------------------------------------------------------- snapshots
    def next_number(self) -> int:
        """The number for the next snapshot id: one more than the largest so far."""
        with self._engine.begin() as conn:
            largest = conn.execute(select(func.max(snapshots_table.c.number))).scalar()
        return 1 if largest is None else int(largest) + 1

    def create(
        self,
        snapshot_id: str,
        *,
        number: int,
        snapshot_type: str,
        initiated_by_node_id: str,
        target_storage_uri: str,
        initiated_at: str,
        started_ns: int,
        status: str = INITIATED,
    ) -> dict[str, Any]:
        """Register a new snapshot; :class:`AlreadyRegistered` if its id or number is taken."""
        return self._insert(
            lambda _conn: (snapshot_id, number),
            snapshot_type=snapshot_type,
            initiated_by_node_id=initiated_by_node_id,
            target_storage_uri=target_storage_uri,
            initiated_at=initiated_at,
            started_ns=started_ns,
            status=status,
        )

    def create_next(
        self,
        make_id: Callable[[int], str],
        *,
        snapshot_type: str,
        initiated_by_node_id: str,
        target_storage_uri: str,
        initiated_at: str,
        started_ns: int,
    ) -> dict[str, Any]:
        """Register a new snapshot under the next free number, ``make_id(number)``.

        The number is read and written in one transaction, on PostgreSQL under an
        advisory lock: controllers sharing the database never draw the same one. (SQLite
        may still answer :class:`AlreadyRegistered` when two processes race; the caller
        tries again.)
        """

        def next_free(conn: Connection) -> tuple[str, int]:
            if conn.dialect.name == "postgresql":
                conn.execute(select(func.pg_advisory_xact_lock(_NUMBER_LOCK)))
            largest = conn.execute(select(func.max(snapshots_table.c.number))).scalar()
            number = 1 if largest is None else int(largest) + 1
            return make_id(number), number

        return self._insert(
            next_free,
            snapshot_type=snapshot_type,
            initiated_by_node_id=initiated_by_node_id,
            target_storage_uri=target_storage_uri,
            initiated_at=initiated_at,
            started_ns=started_ns,
            status=INITIATED,
        )

    def _insert(
        self,
        identify: Callable[[Connection], tuple[str, int]],
        *,
        snapshot_type: str,
        initiated_by_node_id: str,
        target_storage_uri: str,
        initiated_at: str,
        started_ns: int,
        status: str,
    ) -> dict[str, Any]:
        """Insert a snapshot whose id and number ``identify`` gives in the transaction."""
        _check_status(status)
        snapshot_id, number = "", 0
        try:
            with self._engine.begin() as conn:
                snapshot_id, number = identify(conn)
                conn.execute(
                    snapshots_table.insert().values(
                        snapshot_id=snapshot_id,
                        number=number,
                        status=status,
                        snapshot_type=snapshot_type,
                        initiated_by_node_id=initiated_by_node_id,
                        target_storage_uri=target_storage_uri,
                        initiated_at=initiated_at,
                        started_ns=started_ns,
                        nodes_completed=0,
                        nodes_failed=0,
                    )
                )
        except IntegrityError:
            raise AlreadyRegistered(
                f"snapshot_id: {snapshot_id!r} or number {number} is already registered"
            ) from None
        created = self.get(snapshot_id)
        assert created is not None
        return created

    def get(self, snapshot_id: str) -> dict[str, Any] | None:
        """The snapshot's row as a dict (with ``checkpoint_manifest_sha256``), or ``None``
        for an unknown id."""
        with self._engine.begin() as conn:
            row = conn.execute(
                SNAPSHOT_ROWS.where(snapshots_table.c.snapshot_id == snapshot_id)
            ).first()
        return None if row is None else dict(row._mapping)

    def update(
        self,
        snapshot_id: str,
        *,
        status: str | None = None,
        only_from: Iterable[str] | None = None,
        **fields: Any,
    ) -> bool:
        """Set ``status`` and ``fields`` of a snapshot; whether the row changed.

        With ``only_from``, the update happens only while the snapshot's status is one of
        those (a compare-and-set in the database): of two callers racing to finish a
        snapshot, exactly one succeeds.
        """
        values = _updatable(fields)
        if status is not None:
            values["status"] = _check_status(status)
        if not values:
            return False
        statement = update(snapshots_table).where(snapshots_table.c.snapshot_id == snapshot_id)
        if only_from is not None:
            allowed = [_check_status(s) for s in only_from]
            statement = statement.where(snapshots_table.c.status.in_(allowed))
        with self._engine.begin() as conn:
            changed = conn.execute(statement.values(**values)).rowcount
        return bool(changed)

    def finish(self, snapshot_id: str, status: str, **fields: Any) -> bool:
        """Move an unfinished snapshot to ``COMPLETED`` or ``FAILED``, setting ``fields``.

        Whether it moved: ``False`` if it was already finished (first finisher wins).
        """
        if status not in FINAL:
            raise RegistryError(f"status: {' or '.join(FINAL)} finishes a snapshot, got {status!r}")
        return self.update(snapshot_id, status=status, only_from=(INITIATED, IN_PROGRESS), **fields)

    def list(self, status: str | None = None) -> builtins.list[dict[str, Any]]:
        """Snapshots, oldest first; only those with ``status`` if given."""
        query = SNAPSHOT_ROWS.order_by(snapshots_table.c.number)
        if status is not None:
            query = query.where(snapshots_table.c.status == _check_status(status))
        with self._engine.begin() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def durations(self, last: int = 10) -> builtins.list[int]:
        """``duration_ms`` of the ``last`` completed snapshots, newest first."""
        query = (
            select(snapshots_table.c.duration_ms)
            .where(
                snapshots_table.c.status == COMPLETED, snapshots_table.c.duration_ms.is_not(None)
            )
            .order_by(snapshots_table.c.number.desc())
            .limit(last)
        )
        with self._engine.begin() as conn:
            return [int(d) for d in conn.execute(query).scalars()]

    # -------------------------------------------------------------------- parts
    def record_part(
        self,
        snapshot_id: str,
        node_id: str,
        *,
        part_uri: str,
        size_bytes: int,
        ok: bool,
        error: str | None,
        reported_at: str,
    ) -> bool:
        """Record a node's report of its part; ``False`` if the node had reported already.

        A node that reports twice (a retry after a lost answer) keeps its first report.
        :class:`KeyError` for an unknown snapshot.
        """
        row = {
            "snapshot_id": snapshot_id,
            "node_id": node_id,
            "part_uri": part_uri,
            "size_bytes": size_bytes,
            "ok": ok,
            "error": None if error is None else _storable(error),
            "reported_at": reported_at,
        }
        try:
            with self._engine.begin() as conn:
                known = conn.execute(
                    select(snapshots_table.c.snapshot_id).where(
                        snapshots_table.c.snapshot_id == snapshot_id
                    )
                ).first()
                if known is None:
                    raise KeyError(snapshot_id)
                earlier = conn.execute(
                    select(parts_table.c.node_id).where(
                        parts_table.c.snapshot_id == snapshot_id, parts_table.c.node_id == node_id
                    )
                ).first()
                if earlier is not None:
                    return False
                conn.execute(parts_table.insert().values(**row))
        except IntegrityError:
            # another writer inserted the same part between the check and the insert
            return False
        return True

    def parts(self, snapshot_id: str) -> builtins.list[dict[str, Any]]:
        """The parts reported for a snapshot, by node id."""
        query = (
            select(parts_table)
            .where(parts_table.c.snapshot_id == snapshot_id)
            .order_by(parts_table.c.node_id)
        )
        with self._engine.begin() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    # ---------------------------------------------------------------- manifests
    def finish_completed(self, snapshot_id: str, manifest_sha256: str, **fields: Any) -> bool:
        """Move an unfinished snapshot to COMPLETED with ``fields``, recording its
        manifest's SHA-256, in one transaction; whether it moved."""
        values = _updatable(fields)
        statement = (
            update(snapshots_table)
            .where(
                snapshots_table.c.snapshot_id == snapshot_id,
                snapshots_table.c.status.in_((INITIATED, IN_PROGRESS)),
            )
            .values(status=COMPLETED, **values)
        )
        with self._engine.begin() as conn:
            if not conn.execute(statement).rowcount:
                return False
            conn.execute(
                manifests_table.insert().values(snapshot_id=snapshot_id, sha256=manifest_sha256)
            )
        return True

    def manifest_sha256(self, snapshot_id: str) -> str | None:
        """The SHA-256 of a completed snapshot's manifest (None: not recorded)."""
        query = select(manifests_table.c.sha256).where(manifests_table.c.snapshot_id == snapshot_id)
        with self._engine.begin() as conn:
            found = conn.execute(query).scalar()
        return None if found is None else str(found)

    def forget(self, snapshot_id: str) -> bool:
        """Delete a snapshot's rows (its parts and manifest hash included; the restore
        log keeps its history) in one transaction; ``False`` (nothing deleted) while a
        restore of it is unfinished."""
        with self._engine.begin() as conn:
            restores = restores_table.c
            unfinished = conn.execute(
                select(restores.epoch).where(
                    restores.snapshot_id == snapshot_id,
                    restores.status.in_((PREPARING, SWITCHING, RESUMING)),
                )
            ).first()
            if unfinished is not None:
                return False
            for table in (parts_table, manifests_table):
                conn.execute(table.delete().where(table.c.snapshot_id == snapshot_id))
            conn.execute(
                snapshots_table.delete().where(snapshots_table.c.snapshot_id == snapshot_id)
            )
        return True

    # ----------------------------------------------------------------- restores
    def begin_restore(
        self, snapshot_id: str, log_folder: str, *, started_at: str, above: int = 0
    ) -> int:
        """Log a new restore of ``snapshot_id`` as PREPARING; its epoch, above every
        epoch logged before and above ``above``. :class:`AlreadyRegistered` when another
        controller took that epoch first (the caller tries again)."""
        try:
            with self._engine.begin() as conn:
                epoch = max(_highest_epoch(conn), above) + 1
                conn.execute(
                    restores_table.insert().values(
                        epoch=epoch,
                        snapshot_id=snapshot_id,
                        log_folder=log_folder,
                        status=PREPARING,
                        started_at=started_at,
                    )
                )
        except IntegrityError:
            raise AlreadyRegistered("epoch: another controller began a restore first") from None
        return epoch

    def highest_epoch(self) -> int:
        """The highest epoch a restore of this cluster was given (0: none, the first
        run's)."""
        with self._engine.begin() as conn:
            return _highest_epoch(conn)

    def set_restore(
        self,
        epoch: int,
        status: str,
        *,
        only_from: Iterable[str],
        error: str | None = None,
        finished_at: str | None = None,
    ) -> bool:
        """Move the restore of ``epoch`` to ``status`` if it is in one of ``only_from``;
        whether it moved."""
        if status not in RESTORE_STATUSES:
            raise RegistryError(
                f"status: one of {', '.join(RESTORE_STATUSES)} expected, got {status!r}"
            )
        values: dict[str, Any] = {"status": status}
        if error is not None:
            values["error"] = _storable(error)
        if finished_at is not None:
            values["finished_at"] = finished_at
        statement = (
            update(restores_table)
            .where(restores_table.c.epoch == epoch, restores_table.c.status.in_(list(only_from)))
            .values(**values)
        )
        with self._engine.begin() as conn:
            return bool(conn.execute(statement).rowcount)

    def restores(self, *statuses: str) -> builtins.list[dict[str, Any]]:
        """Logged restores, oldest first; only those in ``statuses`` if any are given."""
        query = select(restores_table).order_by(restores_table.c.epoch)
        if statuses:
            query = query.where(restores_table.c.status.in_(statuses))
        with self._engine.begin() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]


def _engine_url(url: URL) -> URL:
    """``url`` with the driver this package installs for PostgreSQL when it names none.

    SQLAlchemy reads a bare ``postgresql://`` as ``postgresql+psycopg2://``, the older
    driver, which the ``live`` extra does not install; ``psycopg`` (version 3) is the one
    it does, so a URL that leaves the choice open gets that.
    """
    if url.drivername == "postgresql":
        return url.set(drivername=f"postgresql+{POSTGRES_DRIVER}")
    return url


def _create_engine(url: URL, shown: str) -> Engine:
    """The engine for ``url``; :class:`RegistryError` naming the URL if it cannot be made."""
    backend = url.get_backend_name()
    try:
        if backend == "sqlite" and url.database in (None, "", ":memory:"):
            # one shared connection, or each thread would see its own empty database
            return create_engine(
                url, poolclass=StaticPool, connect_args={"check_same_thread": False}
            )
        if backend == "postgresql":
            # a server restart (or an idle connection dropped by it) would otherwise fail
            # the next request made on each pooled connection: test it before each use
            connect_args: dict[str, Any] = {}
            if "connect_timeout" not in url.query:
                connect_args["connect_timeout"] = CONNECT_TIMEOUT_S
            return create_engine(url, pool_pre_ping=True, connect_args=connect_args)
        return create_engine(url)
    except NoSuchModuleError as e:
        raise RegistryError(
            f"registry_url: unknown database or driver in {shown!r} ({e}); "
            f"expected sqlite:///... or postgresql+psycopg://..."
        ) from None
    except ImportError as e:
        raise RegistryError(
            f"registry_url: the driver for {shown!r} is not installed ({e}); {_install_hint(url)}"
        ) from None


def _install_hint(url: URL) -> str:
    if url.get_backend_name() == "postgresql" and url.get_driver_name() == POSTGRES_DRIVER:
        return "pip install 'psycopg[binary]>=3.1' (or the live extra: pip install -e '.[live]')"
    return f"install the Python package of the {url.get_driver_name()!r} driver"


def _create_tables(conn: Connection) -> None:
    """Create the tables that are missing, in the transaction of ``conn``."""
    if conn.dialect.name == "postgresql":
        # Two controllers starting on one new database would both find the tables
        # missing and both create them, the second failing. A transaction-scoped
        # advisory lock makes the second wait, then find them there.
        conn.execute(select(func.pg_advisory_xact_lock(_SCHEMA_LOCK)))
    metadata.create_all(conn)


def _advice(url: URL) -> str:
    """What to check when a database at ``url`` could not be opened."""
    if url.get_backend_name() != "postgresql":
        return ""
    where = f"{url.host or 'localhost'}:{url.port or 5432}"
    user = repr(url.username) if url.username else "this user"
    return (
        f"; check that a PostgreSQL server is running at {where}, that database "
        f"{url.database or url.username!r} exists (createdb creates it) and that {user} "
        f"may connect to it"
    )


def _updatable(fields: dict[str, Any]) -> dict[str, Any]:
    """A snapshot row's ``fields`` as stored (:class:`RegistryError` naming any that
    cannot be set)."""
    unknown = sorted(set(fields) - UPDATABLE)
    if unknown:
        raise RegistryError(
            f"fields: {', '.join(unknown)} cannot be set (columns: {', '.join(sorted(UPDATABLE))})"
        )
    return {k: _storable(v) if isinstance(v, str) else v for k, v in fields.items()}


def _storable(value: str) -> str:
    # PostgreSQL's text cannot hold NUL characters (SQLite's can): replace them, so a
    # report is stored alike on both
    return value.replace("\x00", "\ufffd")


def _check_status(status: str) -> str:
    if status not in STATUSES:
        raise RegistryError(f"status: one of {', '.join(STATUSES)} expected, got {status!r}")
    return status


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # SQLite checks foreign keys only when asked, per connection
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _reason(error: SQLAlchemyError) -> str:
    # the driver's message; PostgreSQL's spans lines (the error, then a hint): one line
    orig = getattr(error, "orig", None)
    return " ".join(str(orig if orig is not None else error).split())


def _highest_epoch(conn: Connection) -> int:
    """The restore log's highest epoch (0: no restore yet), read in ``conn``'s
    transaction."""
    largest = conn.execute(select(func.max(restores_table.c.epoch))).scalar()
    return 0 if largest is None else int(largest)


def epoch_folder(logged: dict[str, Any]) -> str:
    """A restore's new epoch's log folder, ``epoch-NNN-TAG``, from its row in the restore
    log (its epoch and tag): beside the run's first logs."""
    return f"epoch-{int(logged['epoch']):03d}-{logged['log_folder']}"
