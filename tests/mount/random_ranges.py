"""Any byte range of a file equals the same range of a full read."""
import os
import random
import sys

path, rounds = sys.argv[1], int(sys.argv[2])
with open(path, "rb") as f:
    full = f.read()
fd = os.open(path, os.O_RDONLY)
rng = random.Random(len(full))
bad = 0
for _ in range(rounds):
    offset = rng.randrange(0, len(full) + 1)
    length = rng.choice([1, 17, 4096, 65536, 200000])
    got = os.pread(fd, length, offset)
    if got != full[offset:offset + length]:
        bad += 1
        print(f"range {offset}+{length} differs", file=sys.stderr)
os.close(fd)
sys.exit(1 if bad else 0)
