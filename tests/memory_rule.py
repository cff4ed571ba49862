"""The memory rule for tests that run `tracefs cat` on a hostile input:
the peak RSS of the run (tests/apitrace/child_usage.py) against
cache_size + 2 % of the trace + 16 MiB.  Not judged under the sanitizers,
whose shadow memory is not the program's."""
import os
import subprocess

from generated_trace import TRACEFS

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
PEAK = os.path.join(SOURCE_ROOT, "tests", "apitrace", "child_usage.py")


def trace_bytes(path):
    """A trace file's size, or the sum of an rr trace directory's files."""
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, name)) for name in os.listdir(path))
    return os.path.getsize(path)


def sanitized():
    libraries = subprocess.run(["ldd", TRACEFS], capture_output=True, text=True).stdout
    return bool(os.environ.get("TRACEFS_SANITIZED")) or "libasan" in libraries or "libubsan" in libraries


def cat_peak(trace, paths, options, cache_mib=16):
    """`tracefs cat -o cache_size=<cache_mib>M,<options> TRACE PATHS...`:
    (peak KiB, rule KiB, failure message or None)."""
    result = subprocess.run(["python3", PEAK, TRACEFS, "cat", "-o", f"cache_size={cache_mib}M,{options}", trace,
                             *paths], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    peak_kib = int(result.stderr.decode().splitlines()[-1].split()[0])
    rule_kib = ((cache_mib + 16) << 20) // 1024 + trace_bytes(trace) // 50 // 1024
    over = not sanitized() and peak_kib > rule_kib
    return peak_kib, rule_kib, f"peak {peak_kib} KiB over the rule's {rule_kib} KiB" if over else None
