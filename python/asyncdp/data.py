"""Data sets: the CLI's LIBSVM reader, its arrays handed to scipy without a copy."""

from __future__ import annotations

import operator
import os
from typing import Any, Tuple, Union

from .errors import ConfigError


def load_libsvm(path: Union[str, "os.PathLike[str]"], num_features: int = 0) -> Tuple[Any, Any]:
    """Reads a LIBSVM / SVMlight file (plain or gzip) with the simulator's own parser.

    Returns ``(X, y)``: ``X`` a ``scipy.sparse.csr_matrix`` of float32 (rows = examples, column j = feature
    index j+1) whose data/indices/indptr arrays are views of the parsed file (no copy), and ``y`` the int32
    class index per row (binary -1/+1 or 0/1 labels become 0/1; integer classes keep their value order).
    ``num_features`` > 0 fixes the column count (e.g. 123 for a9a.t). Malformed input raises
    asyncdp.ParseError with the file, line and column.
    """
    import scipy.sparse  # only this function needs scipy

    from . import _asyncdp

    if isinstance(num_features, bool):
        raise TypeError("num_features: expected a whole number, got bool")
    try:
        num_features = operator.index(num_features)
    except TypeError:
        raise TypeError(f"num_features: expected a whole number, got {num_features!r}") from None
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: expected a path, got {type(path).__name__}")
    if os.fspath(path) == "":
        raise ConfigError("path: empty value; a path is expected", "path", "empty value; a path is expected")
    parts = _asyncdp.load_libsvm(os.fspath(path), num_features)
    matrix = scipy.sparse.csr_matrix((parts["data"], parts["indices"], parts["indptr"]), shape=parts["shape"],
                                     copy=False)
    return matrix, parts["labels"]
