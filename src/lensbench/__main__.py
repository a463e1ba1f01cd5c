"""``python -m lensbench`` = the ``lensbench`` command."""

from .cli import app

if __name__ == "__main__":
    app()
