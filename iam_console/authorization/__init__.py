"""Authorization: roles, permissions, Casbin models, adapters and enforcers, and enforcement."""
