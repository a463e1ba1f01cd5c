"""The ``lensbench`` command line: :mod:`.main` (run, report, list, export, show) and :mod:`.tools` (tool groups)."""
