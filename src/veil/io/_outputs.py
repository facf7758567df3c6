"""Outputs as one set: staged beside their targets, placed together or not at all, never
over an input; stale temporary files of killed runs removed."""

from __future__ import annotations

import contextlib
import errno
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from veil import _pause as pause
from veil.exceptions import (
    CleanupNotice,
    OutputError,
    VeilError,
)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output(
    path: str | os.PathLike[str], *, inputs: Sequence[str | os.PathLike[str]] = (), force: bool
) -> Path:
    """Refuse an output path that would destroy data; call it before doing expensive work.

    An input is never overwritten, not even with ``force``; another existing file only with it.
    The file is still created exclusively when it is written (``OutputSet``): a file another
    process makes meanwhile is not replaced either.
    """
    out = Path(path)
    for source in inputs:
        if isinstance(source, str) and "://" in source:
            continue
        if _same_file(out, Path(source)) or out.resolve() == Path(source).resolve():
            raise OutputError(
                f"output {out} is the input file; veil never overwrites its input, "
                "choose another -o path"
            )
    if out.is_dir():
        raise OutputError(f"output {out} is a directory; name a file, e.g. {out}/release.csv")
    if out.exists() and not out.is_file():  # /dev/null, a pipe: never replaced by a file
        raise OutputError(f"output {out} is not a regular file; name a file, e.g. release.csv")
    if out.exists() and not force:
        raise OutputError(f"output {out} already exists; pass --force to overwrite it")
    folder = out.parent
    if not folder.is_dir():
        raise OutputError(f"output folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(
            f"output folder {folder} is not writable (permission denied); choose another "
            "folder, or change its permissions"
        )
    return out


# Temporary files are named ".{target}.veil-{pid}.{random}.tmp" beside their target: hidden,
# recognisably veil's, and with the process that owns them, so that the next run can remove
# what a killed run (kill -9, a power cut) left behind without touching a running one's.
_TEMP_MARK = ".veil-"


def _temp_glob(target: Path) -> str:
    import glob

    return f".{glob.escape(target.name)}{_TEMP_MARK}*.tmp"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temps(path: str | os.PathLike[str]) -> list[Path]:
    """Remove veil's temporary files of ``path`` whose process no longer runs (a run killed
    by kill -9 cannot clean up after itself); warn about each, since they held released rows."""
    target = Path(path)
    removed: list[Path] = []
    if not target.parent.is_dir():
        return removed
    for tmp in target.parent.glob(_temp_glob(target)):
        pid_text = tmp.name[len(target.name) + 1 + len(_TEMP_MARK) :].split(".", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _running(int(pid_text)):
            continue
        with contextlib.suppress(FileNotFoundError):
            size = tmp.stat().st_size
            tmp.unlink()
            removed.append(tmp)
            warnings.warn(
                f"removed {tmp} ({_size(size)}), a partial {target.name} left by a veil run "
                f"that was killed (process {pid_text})",
                CleanupNotice,
                stacklevel=2,
            )
    return removed


def _size(n: int) -> str:
    if n < 1024:
        return f"{n:,} bytes"
    size = float(n)
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            break
    return f"{size:.1f} {unit}"


_NO_SPACE = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_NO_RIGHTS = {errno.EACCES, errno.EPERM, errno.EROFS}


def explain_os_error(err: OSError) -> str:
    """What the operating system said, and what to do about it."""
    why = err.strerror or str(err) or type(err).__name__
    if err.errno in _NO_SPACE:
        return f"{why}; free some space (or raise the file-size limit), or use another folder"
    if err.errno in _NO_RIGHTS:
        return f"{why}; choose another folder, or change its permissions"
    return why


def output_failure(target: Path, err: OSError) -> OutputError:
    """One line with what failed, where, and what to do."""
    return OutputError(f"cannot write {target}: {explain_os_error(err)}")


class OutputSet:
    """The files of one run, written as a set.

    Each file is written to a temporary name beside its target (``stage``); when the block
    ends without an error, all are moved into place together, each created exclusively unless
    ``force`` (two runs writing the same output cannot both succeed). When anything fails
    (disk full, an error, SIGTERM), no file of the set appears and every temporary one is
    removed::

        with OutputSet(force=False, inputs=["data.csv"]) as outputs:
            write_table(release, outputs.stage("release.csv"))
            outputs.stage("certificate.json").write_text(text)
    """

    def __init__(
        self, *, force: bool = False, inputs: Sequence[str | os.PathLike[str]] = ()
    ) -> None:
        self.force = force
        self.inputs = list(inputs)
        self._staged: dict[Path, Path] = {}

    def check(self, path: str | os.PathLike[str]) -> Path:
        """Refuse a bad output before the work (``check_output``) and remove the stale
        temporary files a killed run left for it."""
        target = check_output(path, inputs=self.inputs, force=self.force)
        remove_stale_temps(target)
        return target

    def stage(self, path: str | os.PathLike[str], *, permissions: int | None = None) -> Path:
        """A new, empty temporary file to write ``path``'s content into."""
        target = Path(path)
        if target in self._staged:
            raise OutputError(f"{target} is written twice in one run; give distinct outputs")
        self.check(target)
        mode = 0o666 if permissions is None else permissions
        for _ in range(100):
            tmp = target.with_name(
                f".{target.name}{_TEMP_MARK}{os.getpid()}.{os.urandom(4).hex()}.tmp"
            )
            try:
                # created with its final mode (the umask applies, as for a plain open);
                # a key is never readable by others, not even for a moment
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            except FileExistsError:
                continue
            except OSError as err:
                raise output_failure(target, err) from err
            os.close(fd)
            if permissions is not None:
                os.chmod(tmp, permissions)
            elif self.force and target.exists():
                os.chmod(tmp, target.stat().st_mode & 0o777)
            self._staged[target] = tmp
            return tmp
        raise OutputError(f"cannot make a temporary file beside {target}")

    def open(self, path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> IO[Any]:
        """``open`` on the staged file of ``path``."""
        encoding = None if "b" in mode else "utf-8"
        return open(self.stage(path, **kwargs), mode, encoding=encoding)

    def commit(self) -> list[Path]:
        """Move every staged file into place; on a failure (a signal included), remove the
        ones already placed and every staged one."""
        placed: list[Path] = []
        try:
            pause.point("outputs written")  # a signal from here on leaves nothing behind
            for tmp in self._staged.values():
                with open(tmp, "rb") as fh:
                    os.fsync(fh.fileno())
            for target, tmp in self._staged.items():
                _place(tmp, target, force=self.force)
                placed.append(target)
            for folder in {t.parent for t in placed}:
                _fsync_folder(folder)
        except BaseException as err:
            for target in placed:
                with contextlib.suppress(OSError):
                    target.unlink()
            self.discard()
            if isinstance(err, OSError):
                raise output_failure(target, err) from err
            raise
        self._staged.clear()
        return placed

    def discard(self) -> None:
        """Remove every staged file: nothing of this run is placed."""
        for tmp in self._staged.values():
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        self._staged.clear()

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, kind: Any, error: Any, _tb: Any) -> None:
        if kind is not None:
            written = list(self._staged)
            self.discard()
            if isinstance(error, OSError) and not isinstance(error, VeilError):
                where = written[-1] if written else Path(error.filename or "the output")
                raise output_failure(where, error) from error
            return
        try:
            self.commit()
        except BaseException:
            self.discard()  # a signal before commit's own clean-up began
            raise


def _place(tmp: Path, target: Path, *, force: bool) -> None:
    if force:
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)  # fails if target exists: no check-then-write race
    except FileExistsError as err:
        raise OutputError(
            f"output {target} already exists (another run made it meanwhile?); pass --force "
            "to overwrite it"
        ) from err
    except OSError as err:
        if err.errno not in {errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK}:
            raise
        # a file system without hard links: take the name exclusively, then fill it
        try:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError as exists:
            raise OutputError(
                f"output {target} already exists (another run made it meanwhile?); pass "
                "--force to overwrite it"
            ) from exists
        os.replace(tmp, target)
        return
    tmp.unlink()


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a folder be opened
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_path(
    path: str | os.PathLike[str],
    *,
    permissions: int | None = None,
    force: bool = True,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; move it onto ``path`` only if the block
    succeeds (an existing file is replaced only with ``force``, an input never).

    ``permissions`` (e.g. 0o600 for a key) is set before the file appears under its name.
    """
    with OutputSet(force=force, inputs=inputs) as outputs:
        yield outputs.stage(path, permissions=permissions)


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str],
    mode: str = "w",
    *,
    permissions: int | None = None,
    force: bool = True,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> Iterator[IO[Any]]:
    """Open a file for writing that appears at ``path`` only when fully written."""
    with (
        atomic_path(path, permissions=permissions, force=force, inputs=inputs) as tmp,
        open(tmp, mode, encoding=None if "b" in mode else "utf-8") as fh,
    ):
        yield fh
