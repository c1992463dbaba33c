"""The one exception the service layer raises for a refused request."""


class ServiceError(Exception):
    """A business error: the message is shown to the caller as is (translated)."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message % args if args else message)
        self.template = message
        self.args_ = args


class Unauthorized(ServiceError):
    """Nobody is signed in where somebody must be."""

    def __init__(self) -> None:
        super().__init__("Please login first")
