"""Every page module; importing this package registers the pages."""

from . import (  # noqa: F401
    apps,
    authorize,
    device,
    errors,
    groups,
    home,
    invitations,
    ldap,
    login,
    mfa,
    organizations,
    shortcuts,
    users,
)
