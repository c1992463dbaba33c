"""The Reflex console: pages call the service layer, never the database directly."""
