"""HTTP only: Casdoor's REST API over the service layer."""
