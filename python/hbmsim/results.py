"""What a command returns in Python: the CLI's own JSON report, as a mapping.

A Result holds the parsed --json file of the command that ran (so it has the
keys the CLI contract fixes, under the same names: ``stats`` in the
runtime's own words, ``failures`` with tags and frames, ``memory``,
``verdict``, ...), what the command printed (``text``), its exit code, and,
for a replay, the --placements rows and the --html page. Nothing here
computes a number: every value comes from the files the command wrote.
"""

import csv
import html
import io

# The --placements CSV's columns (docs/cli.md) and the dtype
# each gets in the structured array. A failed alloc has no offset: -1.
PLACEMENT_FIELDS = (
    ("event", "u8"),
    ("id", "u8"),
    ("requested", "u8"),
    ("status", "U16"),
    ("offset", "i8"),
    ("size", "u8"),
)


class Result:
    """The outcome of one hbmsim command.

    Indexing and attributes both read the JSON report: ``r["verdict"]`` and
    ``r.verdict`` are the same value; ``r.json`` is the whole dict.
    """

    def __init__(self, command, exit_code, report, text, notes,
                 placements_csv=None, html_page=None):
        self.command = command
        self.exit_code = exit_code
        self.json = report
        self.text = text
        self.notes = notes
        self._placements_csv = placements_csv
        self._html = html_page

    # --- the JSON report as a mapping and as attributes ---------------------
    def __getitem__(self, key):
        return self.json[key]

    def __contains__(self, key):
        return key in self.json

    def __iter__(self):
        return iter(self.json)

    def __len__(self):
        return len(self.json)

    def keys(self):
        return self.json.keys()

    def get(self, key, default=None):
        return self.json.get(key, default)

    def __getattr__(self, name):
        # Called only for names that are not real attributes.
        report = self.__dict__.get("json")
        if isinstance(report, dict) and name in report:
            return report[name]
        raise AttributeError(
            f"{type(self).__name__} of `hbmsim {self.__dict__.get('command', '?')}` has no "
            f"attribute or JSON key {name!r}")

    @property
    def fits(self):
        """True when every allocation fit (exit code 0)."""
        return self.exit_code == 0

    # --- placements -----------------------------------------------------------
    def placement_rows(self):
        """The --placements rows as a list of dicts (no numpy needed)."""
        if self._placements_csv is None:
            raise ValueError(f"`hbmsim {self.command}` writes no placements")
        rows = []
        for row in csv.DictReader(io.StringIO(self._placements_csv)):
            rows.append({name: _placement_value(name, row[name]) for name, _ in PLACEMENT_FIELDS})
        return rows

    @property
    def placements(self):
        """One row per alloc as a numpy structured array (event, id,
        requested, status, offset, size); offset is -1 for a failed alloc."""
        import numpy as np  # optional: only this accessor needs it

        dtype = np.dtype(list(PLACEMENT_FIELDS))
        rows = self.placement_rows()
        return np.array([tuple(r[name] for name, _ in PLACEMENT_FIELDS) for r in rows], dtype=dtype)

    def placements_frame(self):
        """The placements as a pandas DataFrame (pandas is an optional import)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.placements)

    # --- display --------------------------------------------------------------
    @property
    def html(self):
        """The --html report page (None when the command writes none)."""
        return self._html

    def _repr_html_(self):
        if self._html is not None:
            # The page is self-contained; an iframe keeps its styles and
            # scripts out of the notebook's own page.
            return ('<iframe style="width:100%;height:720px;border:0" srcdoc="'
                    + html.escape(self._html, quote=True) + '"></iframe>')
        return "<pre>" + html.escape(self.text) + "</pre>"

    def __repr__(self):
        first = self.text.strip().splitlines()[0] if self.text.strip() else ""
        return f"<hbmsim {self.command} exit={self.exit_code}: {first}>"

    def __str__(self):
        return self.text


def _placement_value(name, text):
    if name == "status":
        return text
    if text == "":
        return -1
    return int(text)
