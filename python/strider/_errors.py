"""StriderError: what the package raises when Strider refuses something."""

from ._capi import Status, last_error


class StriderError(RuntimeError):
    """A failure of libstrider or strider-compile, or a run's arguments.

    ``message`` is the one-line message (the C API's own for failures of
    the library, the tool's for :func:`strider.compile`); ``status`` the
    :class:`strider.Status` saying what kind of failure it is.
    """

    def __init__(self, message, status=Status.INTERNAL):
        super().__init__(message)
        self.message = message
        self.status = Status(status)


def check(status):
    """Raises StriderError with this thread's C API message if status fails."""
    if status != Status.OK:
        raise StriderError(last_error(), status)
