"""A table's state as the engine sees it: where it is, its config, schema and timeline.

Loaded fresh for every operation (Hudi's timeline is the source of truth; a
handle must not cache a stale view), and shared by the Spark bridge and the
pure-Arrow code paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa

from hudilite.config import CHANGELOG_ENABLED, Options, TableConfig
from hudilite.errors import TableNotFoundError
from hudilite.filegroup.view import FileSystemView
from hudilite.keygen import KeyGenSpec
from hudilite.merge import MergeSpec
from hudilite.schema import (
    OPERATION_COL,
    avro_to_arrow_schema,
    with_meta_columns,
)
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate import properties_file
from hudilite.tablestate.properties_file import PROPERTIES_FILE as PROPERTIES_FILE  # re-exported
from hudilite.tablestate.properties_file import WRITE_DEFAULTS_FILE as WRITE_DEFAULTS_FILE
from hudilite.timeline.timeline import Timeline


def load_config(gw: FileSystemGateway) -> TableConfig:
    """Read ``.hoodie/hoodie.properties`` (or a valid backup) into a :class:`TableConfig`.

    Raises :class:`TableNotFoundError` without either file and :class:`CorruptFileError`
    when neither holds a valid checksum (see :mod:`hudilite.tablestate.properties_file`).
    """
    return TableConfig.from_properties(properties_file.load(gw))


@dataclass
class TableState:
    """Config, timeline and schema of a table at one moment."""

    gw: FileSystemGateway
    config: TableConfig
    timeline: Timeline

    @classmethod
    def load(cls, gw: FileSystemGateway) -> TableState:
        """Read the table's properties and timeline."""
        config = load_config(gw)
        return cls(gw, config, Timeline.load(gw, config))

    def options(self, overrides: dict[str, str] | None = None) -> Options:
        """Table properties overlaid with per-call options (call options win)."""
        merged = dict(self.config.props)
        merged.update(properties_file.read_write_defaults(self.gw))
        merged.update(overrides or {})
        return Options(merged)

    @cached_property
    def view(self) -> FileSystemView:
        """The file-system view over this timeline."""
        return FileSystemView(self.gw, self.config, self.timeline)

    @cached_property
    def schema_json(self) -> str | None:
        """The table's Avro schema (JSON): the latest write's, else the create schema
        (:meth:`Timeline.schema_json`, Hudi's rule)."""
        return self.timeline.schema_json(self.config.create_schema)

    @cached_property
    def data_schema(self) -> pa.Schema:
        """The data columns: the latest commit's schema, else the create schema."""
        avro = self.schema_json
        if not avro:
            raise TableNotFoundError(f"table at {self.gw.abs_path('')} has no schema")
        schema = avro_to_arrow_schema(avro)
        return pa.schema(
            [
                f
                for f in schema
                if not f.name.startswith("_hoodie_") or f.name == "_hoodie_is_deleted"
            ]
        )

    @property
    def storage_schema(self) -> pa.Schema:
        """Meta columns followed by the data columns: the layout of every base file.

        Changelog tables (``changelog.enabled``) carry ``_hoodie_operation`` after the
        five meta columns, where Hudi puts it.
        """
        schema = with_meta_columns(self.data_schema)
        if self.changelog:
            schema = schema.insert(5, pa.field(OPERATION_COL, pa.string()))
        return schema

    @cached_property
    def changelog(self) -> bool:
        """Whether writes keep every change with its operation (``changelog.enabled``)."""
        return bool(self.options().get(CHANGELOG_ENABLED))

    def keygen(self, options: Options) -> KeyGenSpec:
        """The key generator for this table with these options."""
        return KeyGenSpec.from_config(self.config, options)

    def merge_spec(self, options: Options) -> MergeSpec:
        """The merge rules for this table with these options."""
        return MergeSpec.from_config(self.config, options)
