"""Runs a command and succeeds only if it exits with the expected status (lit's `not` accepts any).

    %python expect_status.py 1 cascade-opt bad.mlir

The command's stdout and stderr pass through unchanged; on another status, one more line says so.
"""

import subprocess
import sys


def main() -> int:
    expected, command = int(sys.argv[1]), sys.argv[2:]
    status = subprocess.run(command, check=False).returncode
    if status != expected:
        print(f"expect_status: '{' '.join(command)}' exited with {status}, expected {expected}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
