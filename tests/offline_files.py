"""Several files of a trace read with two processes: `tracefs stat` of the
paths, then one `tracefs cat` of those that are files, cut at the sizes
stat gave.  A damaged-input test reads five or six files of each of
hundreds of variants; a process per file was most of its time (0.1 s each
under AddressSanitizer)."""
import subprocess


def read_files(tracefs, trace, paths, env=None, timeout=60):
    """(files, kinds, stat, cat): files maps each path that is a file to its
    bytes, kinds each path stat knows to its kind (file, directory,
    symlink); stat and cat are the two runs (cat is None when no path is a
    file).  Raises ValueError when cat's bytes are not the sizes stat gave:
    a view's size and its bytes must agree."""
    stat = subprocess.run([tracefs, "stat", trace, *paths], capture_output=True, timeout=timeout, env=env)
    kinds, sizes = {}, []
    for line in stat.stdout.decode(errors="replace").splitlines():
        path, kind, size, _ino = line.rsplit(" ", 3)
        kinds[path] = kind
        if kind == "file":
            sizes.append((path, int(size)))
    if stat.returncode < 0 or stat.returncode >= 128 or not sizes:
        return {}, kinds, stat, None
    cat = subprocess.run([tracefs, "cat", trace, *(p for p, _ in sizes)], capture_output=True,
                         timeout=timeout, env=env)
    if cat.returncode < 0 or cat.returncode >= 128:
        return {}, kinds, stat, cat
    files, at = {}, 0
    for path, size in sizes:
        files[path] = cat.stdout[at:at + size]
        at += size
    if at != len(cat.stdout):
        raise ValueError(f"{trace}: cat gave {len(cat.stdout)} bytes, stat {at} for {' '.join(p for p, _ in sizes)}")
    return files, kinds, stat, cat
