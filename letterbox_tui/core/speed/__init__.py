"""The speed wing: everything that only makes answers faster, nothing that decides one.

The core never imports this package (a test over the import graph holds it to that); it
imports the core, and the faces (the command line, the app) hand its pieces to the core as
parameters: ``scan(..., cache=..., reader=...)``.

- ``choice``: the one place a face gets its snapshot from (cache or none, C or pure);
- ``accel`` and ``_scanio.c``: the optional C accelerator (the scan's system calls on
  threads) and its loader; ``LETTERBOX_TUI_PURE=1`` switches it off;
- ``cache``: the derived header cache; ``verify``: ``check --verify``'s re-read;
- ``memo``: the answer memo (a ``--json`` answer replayed while nothing changed);
- ``files``: where derived files live and how they are read and written;
- ``after``: work left until the answer is out; ``ending``: a reading command's quick end;
- ``benchgen``: the bench letterbox generator (``letterbox-tui bench``).

Nothing is imported here: a replayed answer loads only what it needs (``Later``).
"""


class Later:
    """A module of this package imported where first used: ``ir = Later("index_rows",
    globals(), "ir")``, then ``ir.x`` imports it and rebinds the global ``ir`` to the module
    itself (so only the first use pays). A question on an unchanged letterbox starts its
    stat proof before it imports the rows, the query language and the model."""

    def __init__(self, name: str, where: dict, alias: str) -> None:
        self._name, self._where, self._alias = name, where, alias

    def __getattr__(self, attr: str):
        import importlib

        module = importlib.import_module(f"{__name__}.{self._name}")
        self._where[self._alias] = module
        return getattr(module, attr)
