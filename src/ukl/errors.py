class UklError(Exception):
    """A failure the user can act on. The CLI prints it as one line, exits non-zero."""
