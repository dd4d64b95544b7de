"""`python3 -m hbmsim ARGS...` is the hbmsim command line: the same commands,
flags, output and exit codes as the binary (it runs the CLI's own code
in-process through hbmsim._native.run)."""

import os
import sys

from . import _native


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    sys.stdout.flush()
    sys.stderr.flush()
    return _native.run([os.fsencode(a) for a in args])


if __name__ == "__main__":
    sys.exit(main())
