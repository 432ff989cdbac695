"""Files between a task directory, the artifact store, tars and disk.

Invariants:
- a `FileEntry.path` is a relative POSIX path without `..`, `.` or empty parts; anything
  else is refused before it can escape a destination directory;
- modes are normalised to 0o755 (any execute bit) or 0o644, so the same files give the
  same entries (and the same build-context tar) on every machine;
- `context_tar` is byte-for-byte deterministic: sorted members, mtime 0, uid/gid 0;
- symlinks are refused (a link can point outside the task) with the path named;
- editor and cache junk (`__pycache__`, `*.pyc`, `.git`, `.DS_Store`) is never imported;
- a path is UTF-8 and does not begin or end with whitespace (a stored path is trimmed, so
  ' a.txt' would turn into another file's name);
- a walk goes at most `MAX_DEPTH` directories down, without recursion, and names a path
  it cannot read (say one past PATH_MAX) instead of failing on it;
- a task directory holds at most `TaskFileLimits` files and bytes, each file counted at
  its full size (a sparse file is stored whole): `check_task_files` refuses one over a
  limit, naming the file, before anything of the task is stored.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from envfactory.core.errors import InvalidTask
from envfactory.core.models import BuildContext, EnvironmentSpec, FileEntry, TaskFileLimits

from .model import BlobWriter

#: Fetches the bytes of an artifact key (e.g. `ArtifactStore.get`).
FileSource = Callable[[str], bytes]

IGNORED_NAMES = frozenset({"__pycache__", ".git", ".DS_Store", ".pytest_cache"})
IGNORED_SUFFIXES = (".pyc", ".pyo")
#: directories a task's files may nest (a deeper tree is refused, not walked)
MAX_DEPTH = 64


def normal_mode(mode: int) -> int:
    return 0o755 if mode & 0o111 else 0o644


def check_relative(path: str) -> str:
    """`path` if it is a safe relative POSIX path; `InvalidTask` otherwise."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or "\\" in path:
        raise InvalidTask(
            f"file path {path!r} is not a relative POSIX path", hint="use a/b/c style paths"
        )
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise InvalidTask(
            f"file path {path!r} has an empty, '.' or '..' part",
            hint="name files inside the task directory only",
        )
    if path.encode("utf-8", "backslashreplace").decode("utf-8") != path:
        raise InvalidTask(
            f"file path {path!r} is not UTF-8",
            hint="rename the file, e.g. `convmv -f latin1 -t utf-8 -r --notest .`",
        )
    if path != path.strip():
        raise InvalidTask(
            f"file path {path!r} begins or ends with whitespace",
            hint="rename the file without it",
        )
    return path


def read_text(file: Path) -> str:
    """`file` as UTF-8 text (newlines as `Path.read_text` reads them); InvalidTask naming
    it and the first byte that is not UTF-8."""
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        data = file.read_bytes()
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidTask(
            f"{file}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line})",
            hint=f"save it as UTF-8, e.g. `iconv -f latin1 -t utf-8 {file.name}`",
        ) from None


def walk_files(root: Path, *, exclude: Iterable[str] = ()) -> list[tuple[str, Path]]:
    """(relative path, absolute path) of every regular file under `root`, sorted.

    `exclude` holds relative paths (files or directories) left out of the walk.
    """
    skip = set(exclude)
    found: list[tuple[str, Path]] = []
    try:
        for path in sorted(_tree(root)):
            rel = path.relative_to(root).as_posix()
            parts = rel.split("/")
            if any(p in IGNORED_NAMES for p in parts) or rel.endswith(IGNORED_SUFFIXES):
                continue
            if any("/".join(parts[: i + 1]) in skip for i in range(len(parts))):
                continue
            if path.is_symlink():
                raise InvalidTask(
                    f"{path}: symlinks are not imported (they can point outside the task)",
                    hint="replace the link with a copy of the file it points to",
                )
            if path.is_file():
                found.append((rel, path))
        _refuse_links_outside(root, found)
    except OSError as exc:  # e.g. a path past PATH_MAX
        rel = os.path.relpath(str(exc.filename or root), root)
        raise InvalidTask(
            f"{root}: {rel[:200]}{'…' if len(rel) > 200 else ''} cannot be read ({exc.strerror})",
            hint="shorten the names on that path",
        ) from None
    return found


def check_task_files(root: Path, limits: TaskFileLimits) -> None:
    """InvalidTask naming the file (or the count) if the task under `root` holds more than
    `limits` allow; links and junk are not counted (the loaders refuse or skip them)."""
    count = total = 0
    try:
        for path in sorted(_tree(root)):
            st = path.lstat()
            if not stat.S_ISREG(st.st_mode) or path.name.endswith(IGNORED_SUFFIXES):
                continue
            count, total = count + 1, total + st.st_size
            if count > limits.max_files:
                _over(root, f"holds more than {limits.max_files} files", "MAX_FILES")
            if st.st_size > limits.max_file_bytes:
                what = f"{st.st_size} bytes{_sparse(st)}, more than {limits.max_file_bytes}"
                _over(path, what, "MAX_FILE_BYTES")
            if total > limits.max_total_bytes:
                what = f"brings the task to {total} bytes, more than {limits.max_total_bytes}"
                _over(path, what, "MAX_TOTAL_BYTES")
    except OSError as exc:
        raise InvalidTask(f"{exc.filename or root}: cannot be read ({exc.strerror})") from None


def _sparse(st: os.stat_result) -> str:
    on_disk = st.st_blocks * 512
    return f" (a sparse file: {on_disk} on disk, stored whole)" if on_disk < st.st_size else ""


def _over(where: Path, what: str, setting: str) -> None:
    raise InvalidTask(
        f"{where}: {what}; nothing of the task was stored",
        hint="ship less data with the task (or one archive it unpacks), or raise "
        f"ENVFACTORY_SANDBOX__TASK_FILES__{setting}",
    )


def _tree(root: Path) -> list[Path]:
    """Every path under `root`, as `root.rglob("*")` finds them (symlinked directories
    not followed) but without its recursion, and junk directories not entered;
    InvalidTask past `MAX_DEPTH` levels."""
    out: list[Path] = []
    stack = [(root, 0)]
    while stack:
        directory, depth = stack.pop()
        if depth >= MAX_DEPTH:
            raise InvalidTask(
                f"{root}: directories nested deeper than {MAX_DEPTH} levels",
                hint="flatten them, or ship the tree as one archive the task unpacks",
            )
        with os.scandir(directory) as entries:
            for entry in entries:
                path = Path(entry.path)
                out.append(path)
                if entry.is_dir(follow_symlinks=False) and entry.name not in IGNORED_NAMES:
                    stack.append((path, depth + 1))
    return out


def _refuse_links_outside(root: Path, found: list[tuple[str, Path]]) -> None:
    """A hard link to a file with a name outside the walk would import that file's
    content (say /etc/shadow, when its owner can link it): refused as a symlink is."""
    names: dict[tuple[int, int], int] = {}
    for _, path in found:
        st = path.stat()
        names[(st.st_dev, st.st_ino)] = names.get((st.st_dev, st.st_ino), 0) + 1
    for _, path in found:
        st = path.stat()
        if st.st_nlink > names[(st.st_dev, st.st_ino)]:
            raise InvalidTask(
                f"{path}: a hard link to a file that has another name outside {root}",
                hint="replace the link with a copy of the file (cp, not ln)",
            )


def store_files(
    files: Iterable[tuple[str, Path]], artifacts: BlobWriter, *, prefix: str = ""
) -> tuple[FileEntry, ...]:
    """Put each file into the store; entries keep `prefix + relative path` and the mode."""
    entries = []
    for rel, path in files:
        key = artifacts.put_bytes(path.read_bytes())
        mode = normal_mode(path.stat().st_mode)
        entries.append(FileEntry(path=check_relative(prefix + rel), key=key, mode=mode))
    return tuple(sorted(entries, key=lambda e: e.path))


def context_tar(build: BuildContext, files: FileSource) -> bytes:
    """The build context as a deterministic tar that `SandboxEngine.build` accepts."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in sorted(build.files, key=lambda e: e.path):
            data = files(entry.key)
            info = tarfile.TarInfo(check_relative(entry.path))
            info.size = len(data)
            info.mode = normal_mode(entry.mode)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def materialize(entries: Iterable[FileEntry], files: FileSource, dest: Path) -> list[Path]:
    """Write `entries` under `dest` (created if missing) with their modes; returns the paths."""
    written = []
    for entry in entries:
        target = dest.joinpath(*check_relative(entry.path).split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(files(entry.key))
        target.chmod(stat.S_IMODE(normal_mode(entry.mode)))
        written.append(target)
    return written


def with_built_services(
    spec: EnvironmentSpec, build: Callable[[bytes, str], str], files: FileSource
) -> EnvironmentSpec:
    """`spec` with each service's image built (`build(context tar, dockerfile)` → image)."""
    services = tuple(
        s.model_copy(update={"image": build(context_tar(s.build, files), s.build.dockerfile)})
        for s in spec.services
    )
    return spec.model_copy(update={"services": services})
