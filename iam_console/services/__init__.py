"""The rules: who may do what, validation, defaults and side effects.

Nothing here imports a web framework; the HTTP API and the Reflex states call
these functions."""
