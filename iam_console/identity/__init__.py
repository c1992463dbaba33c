"""Identity and directory: organizations, users, groups, invitations, LDAP servers and the .xlsx uploads."""
