"""Every error the project raises on purpose, in one tree. It sits in the bottom layer so that every
layer above (records, scrapers, catalog, app) can raise and catch from the same classes.

::

    CatalogError                       root of everything below
    ├── ProviderError                  makes one provider stale: its last good rows are kept
    │   ├── FetchError                 a required document could not be fetched
    │   │   ├── NotInMirror            ... because an offline mirror has no copy of it
    │   │   ├── OffLimits              ... because its URL or a redirect leaves the provider's declared
    │   │   │                              sources or public addresses, or the document budget is spent
    │   │   ├── TooLarge               ... because its body passed the provider's size cap
    │   │   └── TooSlow                ... because it (or the provider's whole fetch) passed its deadline
    │   ├── ParseError (ValueError)    text could not be read as a fact
    │   │   └── LayoutError            a page's shape is not what its parser expects
    │   ├── InvalidOffer (ValueError)  a row breaks one of the catalog's invariants
    │   └── ValidationError            a provider's fresh rows fail a gate before publication
    ├── LockHeld (RuntimeError)        another process is writing the same catalog file
    ├── QueryStopped                   a ``catalog query`` passed its time limit
    └── EnvironmentProblem (OSError)   the machine, not a provider: disk full, read-only directory,
        │                              a missing directory or catalog
        └── CorruptCatalog             a catalog file that DuckDB cannot read

``ValueError`` is mixed in where callers of the pure parsers expect it (pint's pattern: a parse
failure is a bad value). The refresh catches ``ProviderError`` once per provider and never anything
wider except to turn a bug into a stale provider with the traceback logged.
"""


class CatalogError(Exception):
    """Root of the project's errors; the message says what went wrong and where."""


class ProviderError(CatalogError):
    """One provider could not be refreshed; the message names the cause. Its last good rows stay."""


class FetchError(ProviderError):
    """A document the parser needs could not be fetched (HTTP error, timeout, refused)."""


class NotInMirror(FetchError):
    """A mirror refresh asked for a document the mirror has no copy of."""


class OffLimits(FetchError):
    """A URL outside the provider's declared hosts and paths, or a private address: never fetched."""


class TooLarge(FetchError):
    """A document over its size cap (decoded bytes): cut off while streaming, never parsed."""


class TooSlow(FetchError):
    """A document, or a provider's whole fetch, past its deadline: cut off, never parsed."""


class ParseError(ProviderError, ValueError):
    """Text could not be turned into a fact; the message says which text and why."""


class LayoutError(ParseError):
    """A page's shape is not what the parser expects: a table or header is missing, or no rows."""


class InvalidOffer(ProviderError, ValueError):
    """A row breaks one of the catalog's invariants."""


class ValidationError(ProviderError):
    """A provider's fresh rows fail a gate; the provider keeps its previous rows."""


class Unpublishable(CatalogError):
    """The catalog about to be swapped in breaks an invariant; the refresh aborts and the old one stays."""


class LockHeld(CatalogError, RuntimeError):
    """Another refresh (or seed) holds the catalog's lock."""


class QueryStopped(CatalogError):
    """A query someone typed ran past its time limit and was stopped."""


class EnvironmentProblem(CatalogError, OSError):
    """The machine stopped the command (disk full, permissions, a missing directory), not a provider."""


class CorruptCatalog(EnvironmentProblem):
    """The catalog file exists but DuckDB cannot read it."""
