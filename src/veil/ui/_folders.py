"""The folders the workbench may read and write: those given on the command line, nothing
else. A path is resolved (``..`` and symbolic links followed) before it is compared, so that
neither a ``../`` nor a link inside an allowed folder reaches a file outside it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from veil.exceptions import ParameterError

__all__ = ["Folders"]


class Folders:
    """The allowed folders, resolved once."""

    def __init__(self, roots: Sequence[str | os.PathLike[str]]) -> None:
        if not roots:
            raise ParameterError("veil ui needs at least one folder to open files from (--folder)")
        resolved = []
        for root in roots:
            path = Path(root).expanduser().resolve()
            if not path.is_dir():
                raise ParameterError(f"--folder {root}: no such folder")
            resolved.append(path)
        self.roots = tuple(resolved)

    def inside(self, path: Path) -> bool:
        """Whether the resolved ``path`` lies in an allowed folder."""
        return any(path == root or path.is_relative_to(root) for root in self.roots)

    def file(self, given: str) -> Path:
        """The existing file ``given`` names (absolute, or relative to the first folder), or a
        ``ParameterError`` saying why it is refused."""
        path = self._resolve(given)
        if not path.is_file():
            raise ParameterError(f"{given}: no such file in the allowed folders")
        return path

    def folder(self, given: str) -> Path:
        """A folder to write in (made when missing), inside an allowed folder."""
        path = self._resolve(given)
        if path.exists() and not path.is_dir():
            raise ParameterError(f"{given}: a file, not a folder")
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _resolve(self, given: str) -> Path:
        text = given.strip()
        if not text or "\x00" in text:
            raise ParameterError("give a file name")
        raw = Path(text).expanduser()
        path = (raw if raw.is_absolute() else self.roots[0] / raw).resolve()
        if not self.inside(path):
            raise ParameterError(
                f"{given}: outside the folders veil ui was given "
                f"({', '.join(map(str, self.roots))}); start it with --folder to allow another"
            )
        return path

    def listing(self, suffixes: Sequence[str]) -> list[str]:
        """The files with ``suffixes`` in the allowed folders (two levels deep), as paths
        relative to the first folder where they can be."""
        found: list[str] = []
        for root in self.roots:
            for depth in ("*", "*/*"):
                for path in sorted(root.glob(depth)):
                    if path.suffix.lower() in suffixes and path.is_file():
                        real = path.resolve()
                        if self.inside(real):
                            found.append(_shown(path, self.roots[0]))
        return list(dict.fromkeys(found))[:200]


def _shown(path: Path, first: Path) -> str:
    try:
        return str(path.relative_to(first))
    except ValueError:
        return str(path)
