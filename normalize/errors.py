"""The one exception family a parser may raise on bad input."""


class ParseError(ValueError):
    """Text could not be turned into a fact; the message says which text and why."""
