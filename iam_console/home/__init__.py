"""The home pages: the dashboard and the shortcuts."""
