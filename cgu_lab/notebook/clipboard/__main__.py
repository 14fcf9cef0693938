"""`python -m cgu_lab.notebook.clipboard xclip|xsel [options]`: the commands without their
console scripts (an environment where cgu_lab was installed without its entry points)."""

import sys

from .cli import Streams, run_xclip, run_xsel

if __name__ == "__main__":
    tool = sys.argv[1] if len(sys.argv) > 1 else ""
    commands = {"xclip": run_xclip, "xsel": run_xsel}
    if tool not in commands:
        sys.stderr.write("usage: python -m cgu_lab.notebook.clipboard xclip|xsel [options]\n")
        sys.exit(2)
    sys.exit(commands[tool](sys.argv[2:], Streams.system()))
