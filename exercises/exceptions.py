from __future__ import annotations


class CatalogError(Exception):
    """A catalog file is missing, malformed or inconsistent.

    The message names the file (and the key, where there is one) so an
    author can fix it without reading the loader.
    """
