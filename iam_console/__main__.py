"""`python -m iam_console COMMAND`: the console's own tools.

    python -m iam_console new-extension NAME [--into DIR]   # docs/extending.md, "Start from the scaffold"

Exit status: 0 done, 2 refused (the message says why, on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog="python -m iam_console", description="The IAM console's tools.")
    commands = made.add_subparsers(dest="command", required=True, metavar="COMMAND")
    extension = commands.add_parser(
        "new-extension", help="write the project of a new extension (docs/extending.md)",
        description="Write the project of a new extension: its declaration, one kind named NAME with its rules, "
                    "screen, Admin menu entry and migration, and tests of the kind through the HTTP API.")
    extension.add_argument("name", metavar="NAME",
                           help="the extension's name, also its kind's: lowercase letters, digits and underscores, "
                                "starting with a letter (at most 40)")
    extension.add_argument("--into", metavar="DIR", type=Path, default=Path("."),
                           help="the folder in which the project's folder, iam-NAME, is made (here by default)")
    return made


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    if arguments.command == "new-extension":
        from iam_console.scaffold import ScaffoldError, write

        try:
            target = write(arguments.name, arguments.into)
        except ScaffoldError as exc:
            print(f"python -m iam_console new-extension: {exc}", file=sys.stderr)
            return 2
        print(f"Wrote the extension {arguments.name} into {target}. Next, from the console's folder:\n"
              f"  .venv/bin/pip install -e {target}\n"
              f"  .venv/bin/python -m pytest {target / 'tests'}\n"
              "  make run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
