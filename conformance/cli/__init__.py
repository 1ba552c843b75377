"""The ``conformance`` command."""

from conformance.cli.app import app, main

__all__ = ["app", "main"]
