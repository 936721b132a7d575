"""The package version, kept at the bottom layer so that index manifests and the MCP server can name it."""

__all__ = ["__version__"]

__version__ = "0.1.0"
