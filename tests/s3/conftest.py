"""Fixtures and markers for the S3 tests: a moto server on 127.0.0.1 (tests/moto_s3.py)."""

from __future__ import annotations

import pytest

from tests.moto_s3 import S3Server, s3_env, s3_server, s3_uri

__all__ = ["S3Server", "s3_env", "s3_server", "s3_uri"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under tests/s3/ with ``s3``."""
    for item in items:
        if "/tests/s3/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.s3)
