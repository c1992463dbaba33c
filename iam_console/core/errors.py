"""The one exception the service layer raises for a refused request."""


class ServiceError(Exception):
    """A business error: the message is shown to the caller as is (translated)."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message % args if args else message)
        self.template = message
        self.args_ = args

    def __str__(self) -> str:
        """The message in English as the catalog writes it: a counted one in its plural form
        ("1 remaining chance"), as when it is quoted inside another message."""
        try:
            from iam_console.i18n import translate  # lazily: the catalog reads the extensions
            return translate(self.template, "en", *self.args_)
        except Exception:  # an error's text never fails: the plain template then
            return super().__str__()


class Unauthorized(ServiceError):
    """Nobody is signed in where somebody must be."""

    def __init__(self) -> None:
        super().__init__("Please login first")
