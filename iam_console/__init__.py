"""IAM console: an identity and access management server and its admin console."""
