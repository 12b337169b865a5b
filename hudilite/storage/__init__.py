"""Storage: the filesystem gateway, file naming and partition metadata, Parquet base files."""

from hudilite.storage.fs import FileEntry, FileSystemGateway

__all__ = ["FileEntry", "FileSystemGateway"]
