"""Tests of bandit_envs.datasets: real loaders, integrity checks, offline errors, generators.

Real files are read from ../shared/data (never copied into the repository); corrupted copies are
written to pytest's tmp_path only. No test touches the network: pooch.retrieve is patched.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pooch
import pytest
from conftest import GOWALLA_NYC, ML_RATINGS

from bandit_envs.datasets import (
    GOWALLA_URL,
    MOVIELENS,
    NYC_BBOX,
    BBox,
    CheckIns,
    DatasetError,
    Ratings,
    filter_min_counts,
    get_data_home,
    load_gowalla,
    load_movielens,
    synthetic_gowalla,
    synthetic_movielens,
    top_users,
)


@pytest.fixture
def ml_ratings(shared_data: Callable[[str], Path]) -> Path:
    return shared_data(ML_RATINGS)


@pytest.fixture
def gowalla_nyc(shared_data: Callable[[str], Path]) -> Path:
    return shared_data(GOWALLA_NYC)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every download fail as it does offline; return the URLs that were tried."""
    tried: list[str] = []

    def offline(url: str, *args: object, **kwargs: object) -> str:
        tried.append(url)
        raise ConnectionError(f"Failed to resolve host for {url}")

    monkeypatch.setattr(pooch, "retrieve", offline)
    return tried


# --- real data -------------------------------------------------------------------------------


def test_movielens_latest_small_counts(ml_ratings: Path) -> None:
    ratings = load_movielens("ml-latest-small", path=ml_ratings.parent)
    assert (len(ratings), ratings.n_users, ratings.n_items) == (100_836, 610, 9_724)
    assert ratings.user_id.dtype == np.int64 and ratings.timestamp.dtype == np.int64
    assert ratings.rating.dtype == np.float64
    assert set(np.unique(ratings.rating)) == set(np.arange(1, 11) / 2)
    matrix, user_ids, item_ids = ratings.matrix()
    assert matrix.shape == (610, 9_724) and matrix.nnz == 100_836
    assert user_ids[0] == 1 and np.all(np.diff(item_ids) > 0)


def test_movielens_pinned_checksum_matches_real_file(ml_ratings: Path) -> None:
    digest = hashlib.sha256(ml_ratings.read_bytes()).hexdigest()
    assert digest == MOVIELENS["ml-latest-small"].sha256
    assert len(load_movielens(path=ml_ratings)) == 100_836  # the file itself, checksum verified


def test_gowalla_nyc_subset(gowalla_nyc: Path) -> None:
    checkins = load_gowalla(path=gowalla_nyc)
    assert (len(checkins), checkins.n_users, checkins.n_locations) == (138_957, 7_115, 21_509)
    assert NYC_BBOX.contains(checkins.lat, checkins.lon).all()
    assert checkins.timestamp.min() >= 1_238_457_600  # 2009-03-31
    assert checkins.timestamp.max() < 1_287_878_400  # 2010-10-24
    assert checkins.timestamp[0] == 1_286_842_888  # 2010-10-12T00:21:28Z, the first row
    assert top_users(checkins, n=1).size == 1 and top_users(checkins, min_count=1801).size == 0
    box = (40.70, 40.80, -74.02, -73.93)
    midtown = load_gowalla(path=gowalla_nyc, bbox=box)
    assert 0 < len(midtown) < len(checkins)
    assert BBox(*box).contains(midtown.lat, midtown.lon).all()


# --- corrupted copies ------------------------------------------------------------------------


def _ml_lines(ml_ratings: Path) -> list[bytes]:
    return ml_ratings.read_bytes().splitlines(keepends=True)


CORRUPTIONS = {
    "truncated mid-line": lambda lines: b"".join(lines)[:-7],
    "one byte altered": lambda lines: b"".join(lines[:500] + [b"1,2,x.0,3\r\n"] + lines[501:]),
    "missing field": lambda lines: b"".join(lines[:9] + [b"1,50,964982931\r\n"] + lines[10:]),
    "extra field": lambda lines: b"".join(lines[:9] + [b"1,50,5.0,9,1\r\n"] + lines[10:]),
    "empty line": lambda lines: b"".join(lines[:100] + [b"\r\n"] + lines[100:]),
    "bad header": lambda lines: b"".join([b"userId,itemId,rating,timestamp\r\n"] + lines[1:]),
    "rating off scale": lambda lines: b"".join(lines[:3] + [b"1,6,4.2,964982224\r\n"] + lines[4:]),
    "non-ascii byte": lambda lines: b"".join(lines[:3] + [b"1,6,4.0,9649\xff2224\r\n"] + lines[4:]),
    "rows dropped": lambda lines: b"".join(lines[:-10]),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
@pytest.mark.parametrize("verify", ["auto", "schema"])
def test_movielens_corrupt_copy_is_refused(ml_ratings: Path, tmp_path: Path, kind: str, verify: str) -> None:
    copy = tmp_path / "ratings.csv"
    copy.write_bytes(CORRUPTIONS[kind](_ml_lines(ml_ratings)))
    if verify == "schema" and kind == "rows dropped":
        assert len(load_movielens(path=copy, verify="schema")) == 100_826  # a valid subset
        return
    with pytest.raises(DatasetError) as info:
        load_movielens(path=copy, verify=verify)
    message = str(info.value)
    assert str(copy) in message and MOVIELENS["ml-latest-small"].url in message
    if verify == "auto":  # the official file name: the pinned sha256 is checked first
        assert "has sha256" in message and str(MOVIELENS["ml-latest-small"].sha256) in message
        assert 'verify="schema"' in message


def test_movielens_schema_messages_name_the_line(ml_ratings: Path, tmp_path: Path) -> None:
    lines = _ml_lines(ml_ratings)
    copy = tmp_path / "subset.csv"  # not an official name: schema check only
    copy.write_bytes(b"".join(lines[:9] + [b"1,50,964982931\r\n"] + lines[10:]))
    with pytest.raises(DatasetError, match=r"3 fields instead of 4 on line 10"):
        load_movielens(path=copy)
    copy.write_bytes(b"".join(lines[:500] + [b"1,2,x.0,3\r\n"] + lines[501:]))
    with pytest.raises(DatasetError, match=r"rating that is not a number on line 501"):
        load_movielens(path=copy)
    copy.write_bytes(b"".join(lines[:3] + [b"1,6,4.2,964982224\r\n"] + lines[4:]))
    with pytest.raises(DatasetError, match=r"0\.5\.\.5 in steps of 0\.5 on line 4 \(4\.2\)"):
        load_movielens(path=copy)
    copy.write_bytes(b"".join(lines)[:-3])
    with pytest.raises(DatasetError, match="ends in the middle of a line"):
        load_movielens(path=copy)
    copy.write_bytes(b"".join(lines[:1001]))
    assert len(load_movielens(path=copy)) == 1000


def test_other_movielens_formats(tmp_path: Path) -> None:
    dat = tmp_path / "ratings.dat"
    dat.write_bytes(b"1::1193::5::978300760\n1::661::3::978302109\n2::914::1::978301968\n")
    with pytest.raises(DatasetError, match="has 3 data rows but the official file has 1000209"):
        load_movielens("ml-1m", path=tmp_path)
    ratings = load_movielens("ml-1m", path=dat, verify="schema")
    assert ratings.item_id.tolist() == [1193, 661, 914] and ratings.rating.tolist() == [5, 3, 1]
    with pytest.raises(DatasetError, match="rating that is not an integer on line 2"):
        dat.write_bytes(b"1::1193::5::978300760\n1::661::3.5::978302109\n")
        load_movielens("ml-1m", path=dat, verify="schema")
    assert load_movielens("ml-10m", path=dat, verify="schema").rating.tolist() == [5.0, 3.5]
    with pytest.raises(DatasetError, match="tab character on line 1"):
        dat.write_bytes(b"1\t::1193::5::978300760\n")
        load_movielens("ml-10m", path=dat, verify="schema")
    udata = tmp_path / "part.data"
    udata.write_bytes(b"196\t242\t3\t881250949\n186\t302\t3\t891717742\n")
    assert len(load_movielens("ml-100k", path=udata)) == 2
    udata.write_bytes(b"196\t242\t3\t881250949\n186\t302\t6\t891717742\n")
    with pytest.raises(DatasetError, match="rating that is not an integer 1..5 on line 2"):
        load_movielens("ml-100k", path=udata)
    udata.write_bytes(b"")
    with pytest.raises(DatasetError, match="is empty"):
        load_movielens("ml-100k", path=udata)


def _gowalla_head(gowalla_nyc: Path, n: int = 2000) -> list[bytes]:
    with gzip.open(gowalla_nyc, "rb") as src:
        return [src.readline() for _ in range(n)]


def test_gowalla_corrupt_copy_is_refused(gowalla_nyc: Path, tmp_path: Path) -> None:
    lines = _gowalla_head(gowalla_nyc)
    good = tmp_path / "nyc.txt.gz"
    good.write_bytes(gzip.compress(b"".join(lines)))
    assert len(load_gowalla(path=good)) == 2000
    plain = tmp_path / "nyc.txt"
    plain.write_bytes(b"".join(lines))
    assert np.array_equal(load_gowalla(path=plain).lat, load_gowalla(path=good).lat)

    bad_files = {
        "cut.txt.gz": good.read_bytes()[:-100],
        "flipped.txt.gz": _flip_last_byte(good.read_bytes()),
        "cut.txt": b"".join(lines)[:-5],
        "field.txt": b"".join(lines[:7] + [b"0\t2010-10-11T20:21:20Z\t40.74\t16907\n"] + lines[8:]),
        "lat.txt": b"".join(lines[:7] + [b"0\t2010-10-11T20:21:20Z\t95.0\t-73.9\t1\n"] + lines[8:]),
        "time.txt": b"".join(lines[:7] + [b"0\t2010-13-11T20:21:20Z\t40.7\t-73.9\t1\n"] + lines[8:]),
        "iso.txt": b"".join(lines[:7] + [b"0\t2010-10-11 20:21:20\t40.7\t-73.9\t1\n"] + lines[8:]),
    }
    for name, content in bad_files.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(DatasetError, match=str(path)) as info:
            load_gowalla(path=path)
        assert GOWALLA_URL in str(info.value), name
    with pytest.raises(DatasetError, match="line 8"):
        load_gowalla(path=tmp_path / "lat.txt")


def _flip_last_byte(data: bytes) -> bytes:
    """Alter the gzip trailer (CRC32/size), which gzip must detect."""
    return data[:-1] + bytes([data[-1] ^ 0xFF])


def test_gowalla_official_name_checks_row_count(gowalla_nyc: Path, tmp_path: Path) -> None:
    official = tmp_path / "loc-gowalla_totalCheckins.txt.gz"
    official.write_bytes(gzip.compress(b"".join(_gowalla_head(gowalla_nyc, 50))))
    with pytest.raises(DatasetError, match="official file has 6442890"):
        load_gowalla(path=official)
    assert len(load_gowalla(path=tmp_path, verify="schema")) == 50  # folder holding the file


# --- cache, download and offline behaviour ---------------------------------------------------


def test_data_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("BANDIT_ENVS_DATA", raising=False)
    assert get_data_home() == Path.home() / ".cache" / "bandit_envs"
    monkeypatch.setenv("BANDIT_ENVS_DATA", str(tmp_path))
    assert get_data_home() == tmp_path
    assert get_data_home(tmp_path / "x") == tmp_path / "x"


@pytest.mark.parametrize("name", sorted(MOVIELENS))
def test_movielens_offline_says_where_to_put_the_file(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: list[str]
) -> None:
    monkeypatch.setenv("BANDIT_ENVS_DATA", str(tmp_path))
    with pytest.raises(DatasetError) as info:
        load_movielens(name)
    message = str(info.value)
    target = tmp_path / "movielens" / f"{name}.zip"
    assert MOVIELENS[name].url in message and str(target) in message and "path=" in message
    assert no_network == [MOVIELENS[name].url]
    assert not target.exists()


def test_gowalla_offline_says_where_to_put_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: list[str]
) -> None:
    monkeypatch.setenv("BANDIT_ENVS_DATA", str(tmp_path))
    with pytest.raises(DatasetError) as info:
        load_gowalla()
    target = tmp_path / "gowalla" / "loc-gowalla_totalCheckins.txt.gz"
    assert GOWALLA_URL in str(info.value) and str(target) in str(info.value)
    assert no_network == [GOWALLA_URL]


def test_download_false_never_downloads(tmp_path: Path, no_network: list[str]) -> None:
    with pytest.raises(DatasetError, match="download=False") as info:
        load_movielens("ml-1m", data_home=tmp_path, download=False)
    assert MOVIELENS["ml-1m"].url in str(info.value)
    with pytest.raises(DatasetError, match="download=False"):
        load_gowalla(data_home=tmp_path, download=False)
    assert no_network == []


def _zip_latest_small(ml_ratings: Path, archive: Path) -> None:
    archive.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.write(ml_ratings, "ml-latest-small/ratings.csv")


def test_movielens_download_extract_and_cache(
    ml_ratings: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "served.zip"
    _zip_latest_small(ml_ratings, source)
    calls: list[str] = []

    def fake_retrieve(url: str, known_hash: object, fname: str, path: Path, **kw: object) -> str:
        calls.append(url)
        shutil.copy(source, Path(path) / fname)
        return str(Path(path) / fname)

    monkeypatch.setattr(pooch, "retrieve", fake_retrieve)
    home = tmp_path / "cache"
    assert len(load_movielens(data_home=home)) == 100_836
    assert calls == [MOVIELENS["ml-latest-small"].url]
    assert (home / "movielens" / "ml-latest-small" / "ratings.csv").is_file()
    assert len(load_movielens(data_home=home)) == 100_836
    assert len(calls) == 1  # the second call is served from the cache


def test_movielens_cached_file_with_bad_checksum_is_refused(
    ml_ratings: Path, tmp_path: Path, no_network: list[str]
) -> None:
    cached = tmp_path / "movielens" / "ml-latest-small" / "ratings.csv"
    cached.parent.mkdir(parents=True)
    data = bytearray(ml_ratings.read_bytes())
    data[1000] = ord("9") if data[1000] != ord("9") else ord("8")
    cached.write_bytes(bytes(data))
    with pytest.raises(DatasetError) as info:
        load_movielens(data_home=tmp_path, verify="schema")  # cached files are always checked
    message = str(info.value)
    actual = hashlib.sha256(bytes(data)).hexdigest()
    assert actual in message and str(MOVIELENS["ml-latest-small"].sha256) in message
    assert f"delete {cached}" in message and no_network == []


def test_movielens_corrupt_cached_zip_is_refused(ml_ratings: Path, tmp_path: Path, no_network: list[str]) -> None:
    archive = tmp_path / "movielens" / "ml-latest-small.zip"
    _zip_latest_small(ml_ratings, archive)
    data = archive.read_bytes()
    middle = len(data) // 2
    for bad in (data[:-200], data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]):
        archive.write_bytes(bad)
        with pytest.raises(DatasetError, match=f"archive file {archive}.*delete {archive}"):
            load_movielens(data_home=tmp_path)
        assert list((tmp_path / "movielens" / "ml-latest-small").iterdir()) == []


def _tree(folder: Path) -> set[str]:
    """Every file and folder under ``folder``, as relative POSIX paths."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


LATEST_SMALL_CACHE = {
    "movielens",
    "movielens/ml-latest-small.zip",
    "movielens/ml-latest-small",
    "movielens/ml-latest-small/ratings.csv",
}


def test_extracted_file_failing_its_checks_is_not_kept(ml_ratings: Path, tmp_path: Path, no_network: list[str]) -> None:
    archive = tmp_path / "movielens" / "ml-latest-small.zip"
    target = tmp_path / "movielens" / "ml-latest-small" / "ratings.csv"
    altered = ml_ratings.read_bytes().replace(b"1,1,4.0,964982703", b"1,1,5.0,964982703", 1)
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("ml-latest-small/ratings.csv", altered)  # valid schema, wrong sha256
    with pytest.raises(DatasetError) as info:
        load_movielens(data_home=tmp_path)
    message = str(info.value)
    assert f"{target} (extracted from {archive}; not kept) has sha256" in message
    assert f"delete {archive} so that" in message
    assert not target.exists() and _tree(tmp_path) == {
        "movielens",
        "movielens/ml-latest-small.zip",
        "movielens/ml-latest-small",
    }

    spec = MOVIELENS["ml-1m"]  # no pinned sha256: the schema check must run before the file is kept
    archive = tmp_path / "movielens" / "ml-1m.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr(f"{spec.folder}/{spec.file}", b"1::1193::5::978300760\n1::661::x::978302109\n")
    with pytest.raises(DatasetError, match=r"ratings.dat \(extracted from .*ml-1m.zip; not kept\) has a rating"):
        load_movielens("ml-1m", data_home=tmp_path)
    assert not (tmp_path / "movielens" / spec.folder / spec.file).exists()
    assert list((tmp_path / "movielens" / spec.folder).iterdir()) == [] and no_network == []


def test_downloaded_file_failing_its_checks_is_not_kept(
    ml_ratings: Path, gowalla_nyc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: dict[str, bytes] = {}

    def fake_retrieve(url: str, known_hash: object, fname: str, path: Path, **kw: object) -> str:
        (Path(path) / fname).write_bytes(served[url])
        return str(Path(path) / fname)

    monkeypatch.setattr(pooch, "retrieve", fake_retrieve)
    checkins = gzip.compress(b"".join(_gowalla_head(gowalla_nyc, 50)))
    served[GOWALLA_URL] = checkins[:-100]  # cut: not a complete gzip file
    with pytest.raises(DatasetError) as info:
        load_gowalla(data_home=tmp_path)
    target = tmp_path / "gowalla" / "loc-gowalla_totalCheckins.txt.gz"
    assert f"{target} (downloaded from {GOWALLA_URL}; not kept) is not a complete gzip file" in str(info.value)
    assert "nothing was saved; try again later" in str(info.value)
    served[GOWALLA_URL] = checkins  # complete, but 50 rows instead of the official count
    with pytest.raises(DatasetError, match="has 50 data rows but the official file has 6442890"):
        load_gowalla(data_home=tmp_path)
    assert _tree(tmp_path) == {"gowalla"}

    url = MOVIELENS["ml-latest-small"].url
    good = tmp_path / "good.zip"
    _zip_latest_small(ml_ratings, good)
    served[url] = good.read_bytes()[:-200]
    with pytest.raises(
        DatasetError, match=r"ml-latest-small.zip \(downloaded from .*; not kept\) is not a complete zip"
    ):
        load_movielens(data_home=tmp_path / "home")
    assert _tree(tmp_path / "home") == {"movielens", "movielens/ml-latest-small"}  # nothing but folders
    served[url] = good.read_bytes()
    assert len(load_movielens(data_home=tmp_path / "home")) == 100_836
    assert _tree(tmp_path / "home") == LATEST_SMALL_CACHE


def test_staging_folders_of_killed_runs_are_removed_and_live_ones_kept(ml_ratings: Path, tmp_path: Path) -> None:
    from filelock import FileLock

    folder = tmp_path / "movielens" / "ml-latest-small"
    dead, live, starting = folder / ".incomplete-dead", folder / ".incomplete-live", folder / ".incomplete-starting"
    for stage in (dead, live, starting):
        stage.mkdir(parents=True)
        (stage / ".lock").touch()
        (stage / "ratings.csv").write_bytes(b"userId,movieId,rating,timestamp\n1,1,4.0,9")
    for stage in (dead, live):
        (stage / ".owner").write_text("12345\n")  # written by a run once it holds the lock
    _zip_latest_small(ml_ratings, tmp_path / "movielens" / "ml-latest-small.zip")
    with FileLock(live / ".lock"):  # a run still working there
        assert len(load_movielens(data_home=tmp_path, download=False)) == 100_836
        assert _tree(folder) == {
            "ratings.csv",
            ".incomplete-live",
            ".incomplete-live/.lock",
            ".incomplete-live/.owner",
            ".incomplete-live/ratings.csv",
            ".incomplete-starting",  # a run that made it and is about to take its lock
            ".incomplete-starting/.lock",
            ".incomplete-starting/ratings.csv",
        }


def test_a_staging_folder_whose_run_has_not_taken_its_lock_yet_is_kept_for_an_hour(tmp_path: Path) -> None:
    """Between making its folder and locking it, a run's lock is free: only its age tells it from a killed run."""
    import bandit_envs.datasets._fetch as fetch

    stage = tmp_path / ".incomplete-starting"
    stage.mkdir()
    (stage / ".lock").touch()
    assert fetch.remove_stale_staging(tmp_path) == [] and stage.is_dir()
    hour_ago = time.time() - 3700
    os.utime(stage, (hour_ago, hour_ago))
    assert fetch.remove_stale_staging(tmp_path) == [stage] and not stage.exists()


#: Run in a child process: load ml-latest-small from its cached archive, and die (SIGKILL) while
#: the extracted file is being written ("write") or checked ("verify").
_KILLED_EXTRACTION = r"""
import os, shutil, signal, sys
from pathlib import Path
import bandit_envs.datasets._fetch as fetch
from bandit_envs.datasets import load_movielens

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

def write_then_die(src, dst, *args):
    dst.write(src.read(100_000))
    dst.flush()
    die()

if sys.argv[2] == "write":
    shutil.copyfileobj = write_then_die
else:
    fetch.sha256 = die
load_movielens(data_home=Path(sys.argv[1]), download=False)
"""


@pytest.mark.integration  # kills a subprocess mid-extraction
@pytest.mark.parametrize("moment", ["write", "verify"])
def test_extraction_killed_midway_leaves_nothing_under_the_official_name(
    ml_ratings: Path, tmp_path: Path, moment: str, no_network: list[str]
) -> None:
    _zip_latest_small(ml_ratings, tmp_path / "movielens" / "ml-latest-small.zip")
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_EXTRACTION, str(tmp_path), moment], capture_output=True, timeout=300
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    target = tmp_path / "movielens" / "ml-latest-small" / "ratings.csv"
    assert not target.exists()
    assert len(load_movielens(data_home=tmp_path, download=False)) == 100_836  # extracted again
    assert _tree(tmp_path) == LATEST_SMALL_CACHE  # and the killed run's leftovers are gone


class _SlowServer:
    """A loopback HTTP server that sends half of ``payload``, then the rest once released."""

    def __init__(self, payload: bytes) -> None:
        self.release = threading.Event()
        release = self.release

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                half = len(payload) // 2
                self.wfile.write(payload[:half])
                self.wfile.flush()
                if release.wait(120):
                    self.wfile.write(payload[half:])

            def log_message(self, *args: object) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                pass  # the killed client's connection breaks: expected

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ml-latest-small.zip"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


_KILLED_DOWNLOAD = r"""
import dataclasses, sys
from pathlib import Path
from bandit_envs.datasets import MOVIELENS, load_movielens
MOVIELENS["ml-latest-small"] = dataclasses.replace(MOVIELENS["ml-latest-small"], url=sys.argv[2])
load_movielens(data_home=Path(sys.argv[1]))
"""


@pytest.mark.integration  # kills a subprocess mid-download
def test_download_killed_midway_leaves_nothing_under_the_official_name(
    ml_ratings: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "served.zip"
    _zip_latest_small(ml_ratings, source)
    payload = source.read_bytes()
    home = tmp_path / "home"
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server = _SlowServer(payload)
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", _KILLED_DOWNLOAD, str(home), server.url], stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 120
            while not any(p.is_file() and p.stat().st_size >= len(payload) // 4 for p in home.rglob("*")):
                assert child.poll() is None, child.stderr.read().decode()[-2000:] if child.stderr else ""
                assert time.monotonic() < deadline, "the download never reached a quarter of the file"
                time.sleep(0.05)
            child.send_signal(signal.SIGKILL)
        finally:
            child.kill()
            child.wait()
            if child.stderr:
                child.stderr.close()
        assert child.returncode == -signal.SIGKILL
        assert not (home / "movielens" / "ml-latest-small.zip").exists()
        with pytest.raises(DatasetError, match="is not in the cache and download=False"):
            load_movielens(data_home=home, download=False)  # the partial download does not count
        server.release.set()
        spec = dataclasses.replace(MOVIELENS["ml-latest-small"], url=server.url)
        monkeypatch.setitem(MOVIELENS, "ml-latest-small", spec)
        assert len(load_movielens(data_home=home)) == 100_836
    finally:
        server.close()
    assert _tree(home) == LATEST_SMALL_CACHE  # the killed download's leftovers are gone


_LIMITED_DOWNLOAD = r"""
import dataclasses, resource, sys
from pathlib import Path
from bandit_envs.datasets import MOVIELENS, DatasetError, load_movielens
MOVIELENS["ml-latest-small"] = dataclasses.replace(MOVIELENS["ml-latest-small"], url=sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.RLIM_INFINITY))  # a write past it fails as a full disk
try:
    load_movielens(data_home=Path(sys.argv[1]))
except DatasetError as exc:
    print(exc)
"""


@pytest.mark.integration  # a subprocess downloading from a loopback server under a file-size limit
def test_a_download_the_disk_cannot_hold_is_named_as_such_not_as_a_network_failure(
    ml_ratings: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data reached the machine but could not be written: "could not save", not "without network access"."""
    source = tmp_path / "served.zip"
    _zip_latest_small(ml_ratings, source)
    home = tmp_path / "home"
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server = _SlowServer(source.read_bytes())
    server.release.set()
    try:
        child = subprocess.run(
            [sys.executable, "-c", _LIMITED_DOWNLOAD, str(home), server.url], capture_output=True, timeout=120
        )
    finally:
        server.close()
    said = child.stdout.decode()
    assert child.returncode == 0, child.stderr.decode()[-2000:]
    assert said.startswith(f"Could not save {server.url} as ") and "while downloading it (" in said, said
    assert "File too large" in said and "network" not in said, said
    assert not (home / "movielens" / "ml-latest-small.zip").exists()


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match=r"ml-latest-small.*ml-100k.*ml-1m.*ml-10m.*'ml-20m'"):
        load_movielens("ml-20m")
    with pytest.raises(ValueError, match="verify"):
        load_movielens(verify="none")
    with pytest.raises(ValueError, match="bbox"):
        load_gowalla(bbox=(40.0, 41.0, -74.0))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lat_min < lat_max"):
        BBox(41.0, 40.0, -74.0, -73.0)
    with pytest.raises(ValueError, match="lon_max"):
        BBox(40.0, 41.0, -74.0, 200.0)
    with pytest.raises(DatasetError, match="does not exist"):
        load_movielens(path="/nonexistent/ratings.csv")


def test_a_data_path_that_is_a_folder_or_fifo_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "ratings.csv").mkdir()  # the folder given holds a folder where the file should be
    with pytest.raises(DatasetError, match=r"ratings.csv is a folder, not a file; point path= \(data= of the envs"):
        load_movielens(path=tmp_path)
    fifo = tmp_path / "checkins.txt"
    os.mkfifo(fifo)  # reading it would block for ever
    with pytest.raises(DatasetError, match=r"checkins.txt is a FIFO \(named pipe\), not a regular file; point path= "):
        load_gowalla(path=fifo)


# --- tables and helpers ----------------------------------------------------------------------


def _tiny() -> Ratings:
    return Ratings(
        user_id=np.array([7, 7, 3, 3, 3, 9]),
        item_id=np.array([10, 20, 10, 30, 20, 10]),
        rating=np.array([4.0, 3.5, 5.0, 1.0, 2.0, 0.5]),
        timestamp=np.arange(6),
    )


def test_ratings_matrix_and_immutability() -> None:
    ratings = _tiny()
    dense, users, items = ratings.matrix(dense=True)
    assert users.tolist() == [3, 7, 9] and items.tolist() == [10, 20, 30]
    assert dense[1, 1] == 3.5 and np.isnan(dense[2, 2])
    sparse_matrix, _, _ = ratings.matrix()
    assert np.array_equal(sparse_matrix.toarray(), np.nan_to_num(dense))
    with pytest.raises(ValueError):
        ratings.rating[0] = 1.0
    repeated = Ratings(np.array([1, 1]), np.array([2, 2]), np.array([1.0, 2.0]), np.zeros(2, int))
    with pytest.raises(ValueError, match="repeated"):
        repeated.matrix()
    with pytest.raises(ValueError, match="same length"):
        Ratings(np.array([1]), np.array([2, 3]), np.array([1.0]), np.array([0]))
    with pytest.raises(TypeError, match="item_id"):
        Ratings(np.array([1]), np.array([2.5]), np.array([1.0]), np.array([0]))


def test_top_users_and_filter_min_counts() -> None:
    ratings = _tiny()
    assert top_users(ratings).tolist() == [3, 7, 9]
    assert top_users(ratings, n=1).tolist() == [3]
    assert top_users(ratings, min_count=2).tolist() == [3, 7]
    # Item 30 goes (1 rating), then user 3 has 2 left and user 9 has 1, so 9 goes, ...
    core = filter_min_counts(ratings, min_user=2, min_item=2)
    assert sorted(zip(core.user_id.tolist(), core.item_id.tolist(), strict=True)) == [
        (3, 10),
        (3, 20),
        (7, 10),
        (7, 20),
    ]
    assert len(filter_min_counts(ratings, min_user=3, min_item=3)) == 0


# --- synthetic generators --------------------------------------------------------------------


def _columns(table: Ratings | CheckIns) -> list[np.ndarray]:
    return [getattr(table, field.name) for field in dataclasses.fields(table)]


def test_synthetic_generators_are_deterministic() -> None:
    for generate in (synthetic_movielens, synthetic_gowalla):
        a, b, c = generate(seed=3), generate(seed=3), generate(seed=4)
        assert all(np.array_equal(x, y) for x, y in zip(_columns(a), _columns(b), strict=True))
        assert not all(
            x.shape == y.shape and np.array_equal(x, y) for x, y in zip(_columns(a), _columns(c), strict=True)
        )


def test_synthetic_movielens_shape() -> None:
    ratings = synthetic_movielens()
    assert isinstance(ratings, Ratings) and ratings.user_id.dtype == np.int64
    density = len(ratings) / (600 * 1500)
    assert 0.02 <= density <= 0.05
    assert set(np.unique(ratings.rating)) <= set(np.arange(1, 11) / 2)
    assert 3.0 < ratings.rating.mean() < 4.0
    assert np.all(np.diff(ratings.timestamp) > 0)
    assert ratings.user_id.min() >= 1 and ratings.user_id.max() <= 600
    assert ratings.item_id.min() >= 1 and ratings.item_id.max() <= 1500
    ratings.matrix()  # one rating per (user, item) pair
    _, per_user = np.unique(ratings.user_id, return_counts=True)
    assert per_user.min() >= 20 and per_user.max() >= 5 * np.median(per_user)
    _, per_item = np.unique(ratings.item_id, return_counts=True)
    top_share = np.sort(per_item)[::-1][:150].sum() / len(ratings)
    assert 0.35 <= top_share <= 0.75  # the 10% most popular items
    sparser = synthetic_movielens(density=0.02, seed=1)
    assert 0.017 <= len(sparser) / (600 * 1500) <= 0.02


def _km(lat: np.ndarray, lon: np.ndarray, lat0: float, lon0: float) -> np.ndarray:
    return np.stack([(lon - lon0) * 111.32 * np.cos(np.radians(lat0)), (lat - lat0) * 111.32], 1)


def test_synthetic_gowalla_shape() -> None:
    checkins = synthetic_gowalla()
    assert isinstance(checkins, CheckIns) and checkins.timestamp.dtype == np.int64
    assert checkins.n_users == 200 and checkins.location_id.max() < 800
    assert np.all(np.diff(checkins.timestamp) >= 0)
    assert len(top_users(checkins, min_count=1801)) == 5
    xy = _km(checkins.lat, checkins.lon, 40.73, -73.99)
    assert np.linalg.norm(xy, axis=1).max() < 40.0
    # One location, one coordinate pair, as in SNAP.
    ids, first = np.unique(checkins.location_id, return_index=True)
    assert np.array_equal(checkins.lat[first][np.searchsorted(ids, checkins.location_id)], checkins.lat)
    # POIs are clustered: nearest-neighbour distances far below uniform points in the same box.
    poi_xy = xy[first]
    rng = np.random.default_rng(0)
    uniform = rng.uniform(poi_xy.min(0), poi_xy.max(0), poi_xy.shape)
    assert _median_nn(poi_xy) < 0.6 * _median_nn(uniform)
    # Users are local: each user's check-ins spread much less than the whole city's.
    spread = [np.sqrt(xy[checkins.user_id == u].var(0).sum()) for u in range(200)]
    assert np.median(spread) < 0.5 * np.sqrt(xy.var(0).sum())


def _median_nn(points: np.ndarray) -> float:
    distance = np.linalg.norm(points[:, None] - points[None], axis=2)
    np.fill_diagonal(distance, np.inf)
    return float(np.median(distance.min(1)))


def test_synthetic_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="density"):
        synthetic_movielens(density=0.005)
    with pytest.raises(TypeError, match="seed"):
        synthetic_movielens(seed=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_heavy_users"):
        synthetic_gowalla(n_users=3, n_heavy_users=4)
    with pytest.raises(ValueError, match="center"):
        synthetic_gowalla(center=(95.0, 0.0))


@pytest.mark.parametrize(
    ("env_id", "data"), [("PrivacyBudgetMovieLens-v0", "ml-latest-small"), ("MovieLensRecommendation-v0", "ml-100k")]
)
def test_the_offline_message_of_an_env_names_the_keyword_the_env_takes(
    env_id: str, data: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: list[str]
) -> None:
    """The envs take ``data=`` (not the loaders' ``path=``): the message says so, and that keyword then works."""
    import gymnasium as gym

    monkeypatch.setenv("BANDIT_ENVS_DATA", str(tmp_path))
    with pytest.raises(DatasetError) as info:
        gym.make(env_id, data=data)
    message = str(info.value)
    assert "data= of the envs" in message and "--data of banditlab" in message, message
    with pytest.raises(TypeError):  # what the message used to suggest
        gym.make(env_id, path=str(tmp_path))
