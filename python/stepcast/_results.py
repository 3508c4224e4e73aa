"""Result dicts with a DataFrame view: the reports of search, table and operators."""


class Report(dict):
    """A report as the executable's ``--format json`` writes it: ``title``, ``notes`` and ``tables``
    (each with ``name``, ``caption``, ``columns`` and ``rows``). Equal to that JSON as a plain dict."""

    def table(self, name=None):
        """The table called ``name``; the first table when None."""
        tables = self["tables"]
        if name is None:
            return tables[0]
        for table in tables:
            if table["name"] == name:
                return table
        known = ", ".join(t["name"] for t in tables)
        raise KeyError(f"no table {name!r} in this report (tables: {known})")

    def to_dataframe(self, table=None):
        """The rows of one table (the first when None) as a pandas DataFrame, one column per key in
        the report's column order, values in SI units as in the JSON. Imports pandas only here."""
        import pandas

        chosen = self.table(table)
        columns = [c["key"] for c in chosen["columns"]]
        return pandas.DataFrame(chosen["rows"], columns=columns)


class Calibration(dict):
    """The calibration file ``calibrate`` writes, as a dict; ``report`` holds the text the
    executable prints about the fit (points, residuals, held-out errors)."""

    def __init__(self, values, report):
        super().__init__(values)
        self.report = report
