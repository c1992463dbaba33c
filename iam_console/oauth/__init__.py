"""The OAuth 2.0 / OpenID Connect provider: grants, tokens, access keys, and the authorize and device pages."""
