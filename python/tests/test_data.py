"""asyncdp.load_libsvm: the simulator's parser with its arrays shared, not copied, checked against a
plain-Python reading of the same file and the CLI's `data info`."""

import gzip

import numpy as np
import pytest
import scipy.sparse

import asyncdp
from conftest import cli_json, run_cli


def read_plain(path):
    """An independent LIBSVM reader: (label tokens, [(column, value), ...] per row)."""
    labels, rows = [], []
    with gzip.open(path, "rt") as f:
        for line in f:
            tokens = line.split("#")[0].split()
            if not tokens:
                continue
            labels.append(float(tokens[0]))
            rows.append([(int(t.split(":")[0]) - 1, float(t.split(":")[1])) for t in tokens[1:]])
    return labels, rows


def test_load_libsvm_matches_a_plain_reader_and_the_cli(a9a):
    train, _ = a9a
    x, y = asyncdp.load_libsvm(train)
    assert isinstance(x, scipy.sparse.csr_matrix) and x.dtype == np.float32 and y.dtype == np.int32
    labels, rows = read_plain(train)
    assert x.shape == (len(rows), max(c for row in rows for c, _ in row) + 1)
    assert np.array_equal(y, (np.array(labels) > 0).astype(np.int32))  # -1 -> class 0, +1 -> class 1
    expected = scipy.sparse.csr_matrix(
        ([v for row in rows for _, v in row], [c for row in rows for c, _ in row],
         np.cumsum([0] + [len(row) for row in rows])), shape=x.shape, dtype=np.float32)
    assert (x != expected).nnz == 0
    info = cli_json("data", "info", train)
    assert (x.shape[0], x.shape[1], x.nnz) == (info["rows"], info["features"], info["nnz"])


def test_load_libsvm_shares_the_parsed_arrays(a9a):
    x, y = asyncdp.load_libsvm(a9a[1], num_features=123)
    assert x.shape[1] == 123  # a9a.t never uses feature 123
    for array in (x.data, x.indices, x.indptr, y):
        assert not array.flags.owndata and array.base is not None  # a view of the C++ data set
    del y
    assert float(x.sum()) == float(np.asarray(x.data, dtype=np.float64).sum())  # still valid


def test_an_empty_or_missing_path_is_named():
    # An empty path is refused as a path, as the CLI's options and train(out="") refuse it; it read
    # "cannot open: No such file or directory" with no name at all.
    with pytest.raises(asyncdp.ConfigError, match="^path: empty value; a path is expected$") as error:
        asyncdp.load_libsvm("")
    assert error.value.key == "path"
    with pytest.raises(TypeError, match="path: expected a path, got int"):
        asyncdp.load_libsvm(123)
    with pytest.raises(asyncdp.InputError, match="^/nonexistent.svm: cannot open"):
        asyncdp.load_libsvm("/nonexistent.svm")


def test_malformed_file_raises_file_line_column(tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("+1 1:0.5 3:1\n-1 2:x\n")
    with pytest.raises(asyncdp.ParseError) as error:
        asyncdp.load_libsvm(bad)
    assert (error.value.file, error.value.line) == (str(bad), 2)
    cli = run_cli("data", "info", bad, check=False)
    assert cli.returncode == 2 and cli.stderr.strip() == f"error: {error.value}"


def test_undecodable_files_raise_parse_error_with_a_position(tmp_path):
    """A binary file given as LIBSVM, a binary data.train and a UTF-16 schedule CSV: the documented
    ParseError with its file:line:col, never a UnicodeDecodeError from the message's quoted bytes."""
    binary = tmp_path / "random.dat"
    binary.write_bytes(bytes(range(256)) * 8)
    utf16 = tmp_path / "schedule.csv"
    utf16.write_text("q,sigma,count\n0.01,1,10\n", encoding="utf-16")
    cases = [
        lambda: asyncdp.load_libsvm(str(binary)),
        lambda: asyncdp.account(schedule=str(utf16), delta=1e-5),
        lambda: asyncdp.train({"data": {"train": str(binary)}, "dp": {"sigma": 2.0}}),
    ]
    for case in cases:
        with pytest.raises(asyncdp.ParseError) as caught:
            case()
        assert caught.value.line >= 1 and caught.value.column >= 1
        assert caught.value.file in (str(binary), str(utf16))
