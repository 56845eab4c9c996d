"""Datasets: MovieLens ratings, Gowalla check-ins, and seeded synthetic look-alikes.

Real files are downloaded with pooch into a cache (``$BANDIT_ENVS_DATA``, default
``~/.cache/bandit_envs``) or read from a ``path=`` the user gives, verified, and returned as
typed tables of numpy arrays (:class:`Ratings`, :class:`CheckIns`). Offline, a missing file
raises :class:`DatasetError` naming the URL to download and the path to save it at; the
synthetic generators give data with the same schemas anywhere.

Integrity policy
----------------
* Every file gets the strict schema check: every row is parsed with the exact number of
  fields and the expected types, the header of a CSV must match exactly, values must be in
  range (MovieLens ratings in the dataset's scale, ids positive; latitudes in [-90, 90],
  longitudes in [-180, 180]), and a file cut mid-line, with an empty line, or not valid gzip
  or zip is refused.
* Official files are also checked against what is known about them: the pinned sha256
  (ml-latest-small ``ratings.csv`` and ml-100k ``u.data``; none is known for ml-1m, ml-10m and
  the Gowalla check-ins) and the official row count. Files in the cache are always official;
  a file given with ``path=`` counts as official when its name is the official file name
  (``ratings.csv``, ``u.data``, ``ratings.dat``, ``loc-gowalla_totalCheckins.txt[.gz]``),
  unless ``verify="schema"`` is passed. Other names (e.g. a city subset of Gowalla) get the
  schema check only.
* Any failed check raises :class:`DatasetError` (a ``ValueError``) whose one sentence names
  the file, the problem (for a checksum: the actual and the expected sha256) and the remedy
  (for a cached file: delete it so that it is downloaded again). Nothing is half-loaded.
* The cache holds only verified files under their official names. A download, or a file
  extracted from an archive, is written to a staging folder ``.incomplete-*`` beside its
  official name, checked there (every check above), and only then renamed to its official
  name (:func:`os.replace`, atomic); a downloaded archive is kept only once the file extracted
  from it passed. So a process killed midway, or a file that fails a check, leaves nothing
  under an official name, and staging folders never count as data; the staging folders of
  killed runs are removed by the next download or extraction into the same folder (a lock,
  :class:`filelock.FileLock`, held while a run works tells them apart from a run still going).
* A file that cannot be written into the cache while it is extracted (a full disk, a quota, a
  file-size limit, a folder that cannot be written) is a :class:`DatasetError` saying so, with
  the system's reason; the archive is kept, as nothing is wrong with it.
* A table built by hand (:class:`Ratings`, :class:`CheckIns`) gets the value checks a file
  gets where they are part of the schema (ratings finite and positive, latitudes in [-90, 90],
  longitudes in [-180, 180], ids within int64; masked arrays refused), each failure one
  sentence naming the column and its first offending entry; its columns are its own copies,
  so later edits of the caller's arrays change nothing.
* Tables loaded by the environments are kept in memory keyed on the file's size, modification
  time and inode, so a file changed on disk is read, and checked, again.
"""

from bandit_envs.datasets._fetch import DatasetError, get_data_home
from bandit_envs.datasets._filters import filter_min_counts, top_users
from bandit_envs.datasets._tables import NYC_BBOX, BBox, CheckIns, Ratings
from bandit_envs.datasets.gowalla import GOWALLA_URL, load_gowalla
from bandit_envs.datasets.movielens import MOVIELENS, load_movielens
from bandit_envs.datasets.synthetic import synthetic_gowalla, synthetic_movielens

__all__ = [
    "GOWALLA_URL",
    "MOVIELENS",
    "NYC_BBOX",
    "BBox",
    "CheckIns",
    "DatasetError",
    "Ratings",
    "filter_min_counts",
    "get_data_home",
    "load_gowalla",
    "load_movielens",
    "synthetic_gowalla",
    "synthetic_movielens",
    "top_users",
]
