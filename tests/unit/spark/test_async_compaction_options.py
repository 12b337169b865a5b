"""Which streams compact asynchronously, and what the Flink/Hudi async keys mean on a batch
write (no JVM: the decision is plain option logic)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from hudilite import config as cfg
from hudilite.spark.async_compaction import async_compaction_enabled, write_options


def _state(is_mor: bool, stored: dict[str, str] | None = None) -> Any:
    """What the decision reads of a TableState: the table type and the merged options."""
    return SimpleNamespace(
        config=SimpleNamespace(is_mor=is_mor),
        options=lambda overrides: cfg.Options({**(stored or {}), **(overrides or {})}),
    )


@pytest.mark.parametrize(
    ("is_mor", "options", "expected"),
    [
        (True, {}, True),  # on by default for streamed MOR tables (Hudi, Flink)
        (False, {}, False),  # copy-on-write: nothing to compact
        (True, {"hoodie.datasource.compaction.async.enable": "false"}, False),
        (True, {"compaction.async.enabled": "false"}, False),  # Flink's name
        (True, {"compaction.async.enabled": "true"}, True),  # feeds inline only for batches
        (True, {"hoodie.compact.async": "true", "hoodie.compact.inline": "true"}, False),
        (True, {"hoodie.compact.inline": "false"}, True),
    ],
)
def test_async_compaction_enabled(is_mor: bool, options: dict[str, str], expected: bool) -> None:
    assert async_compaction_enabled(_state(is_mor), options) is expected


def test_inline_compaction_stored_on_the_table_wins() -> None:
    assert async_compaction_enabled(_state(True, {"hoodie.compact.inline": "true"}), {}) is False


def test_async_keys_mean_inline_compaction_on_a_batch_write() -> None:
    assert cfg.Options({"compaction.async.enabled": "true"}).get(cfg.INLINE_COMPACT) is True
    assert cfg.Options({"hoodie.compact.async": "false"}).get(cfg.INLINE_COMPACT) is False
    assert cfg.Options({}).get(cfg.INLINE_COMPACT) is False  # the async default feeds nothing
    both = {"compaction.async.enabled": "true", "hoodie.compact.inline": "false"}
    assert cfg.Options(both).get(cfg.INLINE_COMPACT) is False  # the key's own name wins


def test_stream_writes_never_compact_inline() -> None:
    opts = cfg.Options(
        write_options({"compaction.async.enabled": "true", "hoodie.compact.schedule.inline": "1"})
    )
    assert opts.get(cfg.INLINE_COMPACT) is False
    assert opts.get(cfg.SCHEDULE_INLINE_COMPACT) is False
    assert opts.get(cfg.ASYNC_COMPACT) is True
