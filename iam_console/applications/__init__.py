"""Applications, the providers they use and the certs that sign their tokens."""
