"""The shared core every feature stands on: the kinds' registry and their generic CRUD, access,
queries, the rules every write passes, the wire format, the outbound guard and first-start data.

Nothing here imports a web framework or names a feature; the features' services, the HTTP API and
the console's states call these functions."""
