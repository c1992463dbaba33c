"""IAM console: an identity and access management server and its admin console."""

__version__ = "0.1.0"
