"""``python -m lensbench`` = the ``lensbench`` command."""

from lensbench.cli.entry import main

if __name__ == "__main__":
    main()
