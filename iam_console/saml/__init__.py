"""SAML 2.0: this server as identity provider, and as service provider of an external one."""
