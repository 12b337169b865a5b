"""The procedure registry: Hudi's ``CALL`` procedures by name, their typed parameters and
output columns, argument binding and the ``help`` procedure.

A procedure is a function ``(ctx, args) -> rows`` registered with :func:`procedure`; its
parameters and output columns follow Apache Hudi's (see
``docs/dev/hudi-procedures-reference.md``), so Hudi users' runbooks work unchanged. Binding
checks what Hudi checks (required parameters) and more: unknown parameter names and
ill-typed values are errors naming the parameter and its type, and an unknown procedure
names the closest known ones.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from hudilite.errors import HudiliteError, TableNotFoundError
from hudilite.table.api import Table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hudilite.catalog import Catalog

__all__ = [
    "REGISTRY",
    "Output",
    "Param",
    "ProcedureArgumentError",
    "ProcedureContext",
    "ProcedureError",
    "ProcedureSpec",
    "UnknownProcedureError",
    "procedure",
    "run_registered",
]

ParamType = Literal["string", "integer", "long", "boolean", "double", "map"]


class ProcedureError(HudiliteError):
    """A procedure could not do what it was asked."""


class UnknownProcedureError(ProcedureError, ValueError):
    """``CALL`` names a procedure that does not exist."""


class ProcedureArgumentError(ProcedureError, ValueError):
    """A procedure argument is missing, unknown or of the wrong type."""


@dataclass(frozen=True)
class Param:
    """One parameter: Hudi's name, type, whether required, and its default."""

    name: str
    type: ParamType
    required: bool = False
    default: Any = None


@dataclass(frozen=True)
class Output:
    """One output column: name and Spark SQL type."""

    name: str
    type: str = "string"


Rows = "list[tuple[Any, ...]] | DataFrame"


@dataclass(frozen=True)
class ProcedureSpec:
    """A registered procedure."""

    name: str
    params: tuple[Param, ...]
    outputs: tuple[Output, ...]
    description: str
    func: Callable[[ProcedureContext, dict[str, Any]], Any]
    #: Writes nothing (no table file, timeline entry or catalog change, whatever its
    #: arguments): the Thrift server lets readers call it.
    read_only: bool = False

    @property
    def schema(self) -> str:
        """The output columns as a Spark DDL schema string."""
        return ", ".join(f"`{o.name}` {o.type}" for o in self.outputs)


REGISTRY: dict[str, ProcedureSpec] = {}


def procedure(
    name: str,
    params: Sequence[Param],
    outputs: Sequence[Output],
    description: str,
    read_only: bool = False,
) -> Callable[[Callable[[ProcedureContext, dict[str, Any]], Any]], Any]:
    """Register the decorated function as procedure ``name`` (``read_only``: it writes
    nothing, with any arguments; see :attr:`ProcedureSpec.read_only`).

    The function gets the :class:`ProcedureContext` and the bound arguments (every
    parameter name present, defaults filled in) and returns rows (tuples in output-column
    order) or a DataFrame with those columns.
    """

    def register(func: Callable[[ProcedureContext, dict[str, Any]], Any]) -> Any:
        # Two registrations of one name would make CALL ambiguous: fail at import.
        assert name not in REGISTRY, f"procedure {name} registered twice"
        REGISTRY[name] = ProcedureSpec(
            name, tuple(params), tuple(outputs), description, func, read_only
        )
        return func

    return register


class ProcedureContext:
    """What a procedure may use: Spark, the catalog, the current database, session options."""

    def __init__(
        self,
        spark: SparkSession,
        catalog: Catalog,
        current_database: str,
        options: Mapping[str, str] | None = None,
        procedure: str = "",
    ) -> None:
        self.spark = spark
        self.catalog = catalog
        self.current_database = current_database
        self.options = dict(options or {})
        self.procedure = procedure

    def table(self, args: Mapping[str, Any]) -> Table:
        """The table named by ``table`` (``db.t`` or ``t``) or, failing that, ``path``."""
        name = args.get("table")
        if name:
            db, _, tbl = str(name).rpartition(".")
            db = (db or self.current_database).lower()
            try:
                entry = self.catalog.get_table(db, tbl.lower())
            except (TableNotFoundError, HudiliteError):
                raise TableNotFoundError(
                    f"{self.procedure}: table {db}.{tbl.lower()} not found"
                ) from None
            return Table.load(self.spark, entry.location)
        path = args.get("path")
        if path:
            return Table.load(self.spark, str(path))
        raise ProcedureArgumentError(f"{self.procedure}: give the table (table => ...) or path")

    def frame(self, rows: list[tuple[Any, ...]], schema: str) -> DataFrame:
        """Rows as a DataFrame with ``schema``."""
        return self.spark.createDataFrame(rows, schema)


# ---------------------------------------------------------------------------------------
# binding


def lookup(name: str) -> ProcedureSpec:
    """The procedure called ``name`` (``system.`` and other prefixes ignored, any case)."""
    key = name.rsplit(".", 1)[-1].lower()
    spec = REGISTRY.get(key)
    if spec is None:
        close = difflib.get_close_matches(key, sorted(REGISTRY), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; CALL help() lists them"
        raise UnknownProcedureError(f"unknown procedure {name!r}{hint}")
    return spec


def _typed(spec: ProcedureSpec, param: Param, value: Any) -> Any:
    """``value`` as ``param``'s type, or an error naming the parameter and type."""
    if value is None:
        return None

    def bad() -> ProcedureArgumentError:
        return ProcedureArgumentError(
            f"{spec.name}: parameter {param.name!r} expects {param.type}, "
            f"got {type(value).__name__} {value!r}"
        )

    if param.type == "string":
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)  # instant times are often written unquoted
        return str(value)
    if param.type in ("integer", "long"):
        if isinstance(value, bool):
            raise bad()
        if isinstance(value, int):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        raise bad()
    if param.type == "double":
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise bad()
        try:
            return float(value)
        except ValueError:
            raise bad() from None
    if param.type == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise bad()
    return value


def bind(spec: ProcedureSpec, args: Sequence[Any], named: Mapping[str, Any]) -> dict[str, Any]:
    """Bind positional and named arguments to ``spec``'s parameters, with defaults."""
    if len(args) > len(spec.params):
        raise ProcedureArgumentError(
            f"{spec.name}: takes at most {len(spec.params)} argument(s), got {len(args)}"
        )
    by_name = {p.name.lower(): p for p in spec.params}
    values: dict[str, Any] = {}
    for positional, value in zip(spec.params, args, strict=False):
        values[positional.name] = value
    for key, value in named.items():
        param = by_name.get(key.lower())
        if param is None:
            known = ", ".join(p.name for p in spec.params) or "none"
            raise ProcedureArgumentError(
                f"{spec.name}: unknown parameter {key!r} (parameters: {known})"
            )
        if param.name in values:
            raise ProcedureArgumentError(f"{spec.name}: parameter {param.name!r} given twice")
        values[param.name] = value
    out: dict[str, Any] = {}
    for param in spec.params:
        value = _typed(spec, param, values.get(param.name))
        if value is None:
            if param.required:
                raise ProcedureArgumentError(
                    f"{spec.name}: missing required parameter {param.name!r} ({param.type})"
                )
            value = param.default
        out[param.name] = value
    return out


def run_registered(
    session: Any, name: str, args: Sequence[Any], named_args: Mapping[str, Any]
) -> DataFrame:
    """Run registered procedure ``name`` for a SQL session (anything with ``spark``,
    ``catalog``, ``current_database`` and ``options``); returns its rows as a DataFrame.
    :func:`hudilite.procedures.run_procedure` loads every procedure module first."""
    spec = lookup(name)
    bound = bind(spec, args, named_args)
    ctx = ProcedureContext(
        session.spark,
        session.catalog,
        session.current_database,
        getattr(session, "options", None),
        spec.name,
    )
    result = spec.func(ctx, bound)
    if isinstance(result, list):
        return ctx.frame(result, spec.schema)
    return result


def parse_options(text: str | None) -> dict[str, str]:
    """Hudi's ``options => 'k1=v1,k2=v2'`` as a dict."""
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise ProcedureArgumentError(f"options entry {item.strip()!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


def run_pending(
    procedure_name: str,
    kind: str,
    op: str,
    *,
    instants: str | None,
    pending: Sequence[str],
    limit: int | None,
    schedule: Callable[[], str | None],
    execute: Callable[[str], Any],
    op_given: bool = True,
) -> list[str]:
    """Hudi's ``HoodieProcedureUtils`` flow shared by ``run_compaction`` and ``run_clustering``.

    ``instants`` (comma-separated) executes exactly those pending plans (``op`` must then be
    ``execute`` or not given); otherwise the oldest ``limit`` pending plans are the
    candidates. ``schedule``/``scheduleandexecute`` first plan a new one (``schedule()``
    returns its instant or None); when one is made it is the only one run. Returns the
    instants acted on.
    """
    wanted = [s.strip() for s in str(instants or "").split(",") if s.strip()]
    if wanted:
        if op_given and op != "execute":
            raise ProcedureArgumentError(
                f"{procedure_name}: specific instants can only be used with op => 'execute'"
            )
        missing = [i for i in wanted if i not in pending]
        if missing:
            raise ProcedureError(
                f"{procedure_name}: no pending {kind} at {', '.join(missing)} "
                f"(pending: {', '.join(pending) or 'none'})"
            )
        op, to_run = "execute", sorted(wanted)
    else:
        to_run = list(pending[:limit] if limit else pending)
    if op in ("schedule", "scheduleandexecute"):
        planned = schedule()
        if planned is not None:
            to_run = [planned]
    if op in ("execute", "scheduleandexecute"):
        for instant in to_run:
            execute(instant)
    return to_run


# ---------------------------------------------------------------------------------------
# help


def _cell(value: Any) -> str:
    return f"{value!s:<30}"


@procedure(
    "help",
    [Param("cmd", "string")],
    [Output("result")],
    "Lists the procedures, or one procedure's parameters and output columns.",
    read_only=True,
)
def _help(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    cmd = args["cmd"]
    if not cmd:
        lines = ["synopsis", "\tcall [command]([key1]=>[value1],[key2]=>[value2])", ""]
        lines.append("commands and description")
        for name in sorted(REGISTRY):
            lines.append(f"\t{name}\t{REGISTRY[name].description}")
        lines.append(
            "You can use 'call help(cmd=>[command])' to view the detailed parameters of the command"
        )
        return [("\n".join(lines) + "\n",)]
    spec = lookup(str(cmd).strip())
    lines = ["parameters:"]
    header = ["param", "type_name", "default_value", "required"]
    lines.append("\t" + "\t".join(_cell(h) for h in header))
    for p in spec.params:
        default = (
            "None"
            if p.default is None
            else str(p.default).lower()
            if isinstance(p.default, bool)
            else p.default
        )
        row = (p.name, p.type, default, str(p.required).lower())
        lines.append("\t" + "\t".join(_cell(v) for v in row))
    lines.append("outputType:")
    lines.append("\t" + "\t".join(_cell(h) for h in ("name", "type_name", "nullable", "metadata")))
    for o in spec.outputs:
        lines.append("\t" + "\t".join(_cell(v) for v in (o.name, o.type, "true", "{}")))
    return [("\n".join(lines) + "\n",)]
