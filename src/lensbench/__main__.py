"""``python -m lensbench`` = the ``lensbench`` command."""

from lensbench.cli.main import app

if __name__ == "__main__":
    app()
