#!/usr/bin/env python3
"""Runs a command; prints on stderr's last line its peak resident set size
in KiB and the CPU seconds it used (user + system), from the rusage of
the waited-for child; exits with its status.
usage: child_usage.py COMMAND [ARG...]"""
import resource
import subprocess
import sys

status = subprocess.run(sys.argv[1:]).returncode
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_maxrss, f'{usage.ru_utime + usage.ru_stime:.3f}', file=sys.stderr)
sys.exit(status)
