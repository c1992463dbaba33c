"""Every page module; importing this package registers the pages."""

from . import errors, home, login  # noqa: F401
