"""File groups and slices, and the file-system view that finds the live ones."""

from hudilite.filegroup.slices import BaseFile, FileGroup, FileSlice, LogFile
from hudilite.filegroup.view import FileSystemView, Visibility

__all__ = ["BaseFile", "FileGroup", "FileSlice", "FileSystemView", "LogFile", "Visibility"]
