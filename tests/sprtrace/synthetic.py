"""sp-rtrace: a synthetic log from scripts/make-sprtrace (many contexts,
resources, reused addresses, refcounted segments, leaks) read through the
checkpoints and leak bits.

1. The views agree with each other: `leaks` lists exactly the calls whose
   calls/<n>.json says "leaked": true, `leaks-compressed` lists the same
   calls, each resource's `leaks` is its share of them, the call count is
   `info`'s, and calls/<n>.json at random n (read in a random order) names
   call n with the fields its `events` line shows.
2. A leak set computed here from the events text (postproc's rules: key
   resource + address, refcount flag counts) is the one tracefs prints.
3. The saved index is under 2 % of the log, a second open uses it, and
   every view is byte-identical from it and under a 4 MiB cache.
4. The same for the common event files of a log of 1100 allocation
   functions (pairs named through the pair codes, the escapes and the
   resource-type fallback: all saved with the index); its backtraces are
   few, so that its 2 % check weighs the pair data more than the leak
   groups.  In a log whose allocation functions have 300-byte names (above
   LIMIT_SPRT_PAIR_NAME_BYTES), their pairs are named `memory` at both
   ends, each end's function in args.function."""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

TRACEFS = os.environ["TRACEFS"]
ROOT = os.environ["TRACEFS_SOURCE_ROOT"]
failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message)


def cat_bytes(trace, path, env):
    return subprocess.run([TRACEFS, "cat", trace, path], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=300, check=True).stdout


def cat(trace, path, env):
    return cat_bytes(trace, path, env).decode()


CALL_LINE = re.compile(r"^(\d+)\. (?:@[0-9a-f]+ )?(?:\[[0-9:.]+\] )?(\w+)(?:<(\w+)>)?\((?:(-?\d+)\) = )?(0x[0-9a-f]+)\)?$")


def parse_calls(text):
    """Call number -> (name, resource, size or None, id) from postproc text."""
    calls = {}
    for line in text.splitlines():
        m = CALL_LINE.match(line)
        if m:
            calls[int(m.group(1))] = (m.group(2), m.group(3), m.group(4), m.group(5))
    return calls


def expected_leaks(calls):
    """postproc's fcall_remove_freed over the synthetic log's resources
    (memory, file: plain; segment: refcounted)."""
    live, leaked = {}, set()
    allocs = {"malloc", "calloc", "realloc", "open", "shmat"}
    for n in sorted(calls):
        name, resource, _, address = calls[n]
        key = (resource, address)
        if name in allocs:
            if key in live and resource == "segment":
                live[key][1] += 1
                continue
            live[key] = [n, 1]
            leaked.add(n)
        else:
            found = live.get(key)
            if found:
                found[1] -= 1
                if found[1] == 0 or resource != "segment":
                    leaked.discard(found[0])
                    del live[key]
    return leaked


def views(trace, env, calls, fresh=None):
    """The views' text; with `fresh` (a directory), each file read by an
    open that finds no saved index."""
    rng = random.Random(5)
    paths = ["/events", "/leaks", "/leaks-compressed", "/export/chrome.json", "/resources/memory/leaks",
             "/resources/segment/calls", "/contexts/4-context 2: phase-1/calls"]
    paths += [f"/calls/{n}.json" for n in rng.sample(range(1, calls + 1), 40)]
    if fresh:
        return {p: cat(trace, p, dict(env, XDG_CACHE_HOME=tempfile.mkdtemp(dir=fresh))) for p in paths}
    return {p: cat(trace, p, env) for p in paths}


def many_functions(work):
    trace = os.path.join(work, "many-functions.rtrace")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make-sprtrace"), trace,
                    "--calls", "40000", "--alloc-names", "1100", "--backtraces", "200"], check=True)
    paths = ["/events.jsonl", "/export/chrome.json", "/export/trace.perfetto-trace", "/summary.csv"]
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache-names"))
    first = {p: cat_bytes(trace, p, dict(env, XDG_CACHE_HOME=tempfile.mkdtemp(dir=work))) for p in paths}
    cat(trace, "/info.json", env)
    index = [os.path.join(d, f) for d, _, fs in os.walk(env["XDG_CACHE_HOME"]) for f in fs if f.endswith(".index")]
    if len(index) != 1 or os.path.getsize(index[0]) > 0.02 * os.path.getsize(trace):
        fail("many-functions: saved index missing or over 2 % of the log")
    else:
        print(f"many-functions: index {os.path.getsize(index[0])} bytes")
    if not re.search(r"^saved_index used$", cat(trace, "/.tracefs/stats", env), re.M):
        fail("many-functions: second open did not use the saved index")
    if {p: cat_bytes(trace, p, env) for p in paths} != first:
        fail("many-functions: event files differ when served from the saved index")
    small = dict(env, TRACEFS_CACHE_SIZE="4M", XDG_CACHE_HOME=os.path.join(work, "cache-names-small"))
    if {p: cat_bytes(trace, p, small) for p in paths} != first:
        fail("many-functions: event files differ under a 4 MiB cache")
    names = {json.loads(line)["name"] for line in first["/events.jsonl"].decode().splitlines()
             if '"kind":"async_end"' in line}
    escaped = {n for n in names if re.fullmatch(r"alloc\d+", n) and int(n[5:]) >= 5}
    if "memory" not in names or "alloc3" not in names or not escaped:
        fail("many-functions: pairs not named both after their function and their resource type")
    print(f"many-functions: log {os.path.getsize(trace)} bytes, {len(names)} names of async ends")


def long_names(work):
    trace = os.path.join(work, "long-names.rtrace")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make-sprtrace"), trace, "--calls", "3000",
                    "--alloc-names", "7", "--alloc-name-length", "300"], check=True)
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache-long"))
    ends = [json.loads(line) for line in cat(trace, "/events.jsonl", env).splitlines()
            if '"kind":"async_' in line and '"cat":"memory"' in line]
    if not ends or any(e["name"] != "memory" or len(e["args"]["function"]) not in (4, 300) for e in ends):
        fail("long-names: a memory pair is not named `memory` with its function in args.function")


def main():
    with tempfile.TemporaryDirectory(prefix="tracefs-sprt-synthetic-") as work:
        trace = os.path.join(work, "synthetic.rtrace")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make-sprtrace"), trace,
                        "--calls", "60000", "--leak-percent", "5"], check=True)
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))
        events = cat(trace, "/events", env)
        calls = parse_calls(events)
        count = json.loads(cat(trace, "/info.json", env))["sp-rtrace"].get("calls")
        if count != len(calls) or sorted(calls) != list(range(1, len(calls) + 1)):
            fail(f"info says {count} calls, events numbers {len(calls)}")
        leaks = set(parse_calls(cat(trace, "/leaks", env)))
        compressed = parse_calls(cat(trace, "/leaks-compressed", env))
        if set(compressed) != leaks:
            fail(f"leaks-compressed lists {len(compressed)} calls, leaks {len(leaks)}")
        want = expected_leaks(calls)
        if leaks != want or not leaks:
            fail(f"leaks: {len(leaks)} calls, expected {len(want)} (first differences "
                 f"{sorted(leaks ^ want)[:5]})")
        memory = set(parse_calls(cat(trace, "/resources/memory/leaks", env)))
        if memory != {n for n in leaks if calls[n][1] == "memory"}:
            fail("resources/memory/leaks is not the memory share of leaks")
        rng = random.Random(9)
        for n in rng.sample(range(1, len(calls) + 1), 60):
            text = cat(trace, f"/calls/{n}.json", env)
            if f'"index": {n},' not in text or f'"id": "{calls[n][3]}"' not in text:
                fail(f"calls/{n}.json does not describe call {n}")
                break
            if ('"leaked": true' in text) != (n in leaks):
                fail(f"calls/{n}.json disagrees with leaks")
                break
        first = views(trace, env, len(calls), fresh=work)
        index = [os.path.join(d, f) for d, _, fs in os.walk(env["XDG_CACHE_HOME"]) for f in fs
                 if f.endswith(".index")]
        size = os.path.getsize(trace)
        if len(index) != 1:
            fail(f"{len(index)} saved index files")
        elif os.path.getsize(index[0]) > 0.02 * size:
            fail(f"saved index {os.path.getsize(index[0])} bytes > 2 % of the {size}-byte log")
        if not re.search(r"^saved_index used$", cat(trace, "/.tracefs/stats", env), re.M):
            fail("second open did not use the saved index")
        if views(trace, env, len(calls)) != first:
            fail("views differ when served from the saved index")
        small = dict(env, TRACEFS_CACHE_SIZE="4M", XDG_CACHE_HOME=os.path.join(work, "cache-small"))
        if views(trace, small, len(calls)) != first:
            fail("views differ under a 4 MiB cache")
        print(f"{len(calls)} calls, {len(leaks)} leaks, log {size} bytes, "
              f"index {os.path.getsize(index[0]) if index else 0} bytes")
        many_functions(work)
        long_names(work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
