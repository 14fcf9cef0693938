"""`xclip` and `xsel` for a notebook whose clipboard is the browser's.

Linux tools find "the clipboard" by running `xclip` or `xsel`: pandas'
`read_clipboard()`/`to_clipboard()`, pyperclip, editors, shell scripts. A
notebook server has no X display, so those fail; these two commands take the
options those tools and people use and carry the request to the browser in
front of the notebook instead (client.py). They are the platform's console
scripts, written into the bin of every environment the platform builds
(backends/local_environments.py), and the notebook server puts a copy first
on its kernels' and terminals' PATH (relay.py), so they come before a host's
or an image's X11 `xclip` wherever the environment came from.

The browser has one clipboard: the PRIMARY, SECONDARY and CLIPBOARD
selections all name it. Options that only make sense for an X server
(`-display`, `-loops`, `-nodetach`...) are accepted and do nothing. A failure
prints one sentence on stderr and exits 1, never waits past the timeout
($CGU_CLIPBOARD_TIMEOUT, 20 s): pandas and pyperclip then show that sentence.
"""

from __future__ import annotations

import os
import sys
from typing import BinaryIO

from . import client
from .protocol import TEXT, X11_TEXT_TARGETS, ClipboardError, canonical_type

VERSION = "0.13 (cgu-lab: the browser's clipboard)"

XCLIP_HELP = """Usage: xclip [OPTION] [FILE]...
Copy text from standard input or files to the clipboard of the browser in front of
this notebook, or print what that clipboard holds.

  -i, -in              read into the clipboard (the default)
  -o, -out             print the clipboard
  -f, -filter          in -i mode, also print what was read
  -r, -rmlastnl        drop one trailing newline
  -selection NAME      primary, secondary or clipboard: all are the browser's clipboard
  -t, -target TYPE     text/plain (default), text/html, image/png; -t TARGETS -o lists
  -h, -help            this help;   -version   the version
The wait for the browser is $CGU_CLIPBOARD_TIMEOUT seconds (default 20).
"""

XSEL_HELP = """Usage: xsel [options]
Read or set the clipboard of the browser in front of this notebook.

  -i, --input          read standard input into the clipboard
  -o, --output         print the clipboard
  -a, --append         append standard input to the clipboard
  -c, --clear          empty the clipboard;  -d, --delete  the same
  -p, -s, -b           --primary, --secondary, --clipboard: all are the browser's
  -h, --help           this help;   --version   the version
Without -i or -o: print the clipboard unless standard output is a terminal and
standard input is not; read standard input into it when standard input is not a terminal.
The wait for the browser is $CGU_CLIPBOARD_TIMEOUT seconds (default 20).
"""


class Usage(Exception):
    """A command line the real tool would refuse too."""


class Streams:
    """The standard streams as bytes, replaceable in tests."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, stderr: BinaryIO) -> None:
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr

    @classmethod
    def system(cls) -> Streams:
        return cls(sys.stdin.buffer, sys.stdout.buffer, sys.stderr.buffer)

    def tty(self, stream: BinaryIO) -> bool:
        try:
            return stream.isatty()
        except (AttributeError, ValueError):
            return False

    def say(self, tool: str, sentence: str) -> None:
        self.stderr.write(f"{tool}: {sentence}\n".encode())
        self.stderr.flush()


DEFERRED = (
    "this browser lets the page copy only on a click: click 'Copy' in the notebook's tab "
    "to put it on your clipboard"
)


def _write(tool: str, io: Streams, data: bytes, mime: str = TEXT) -> None:
    if not client.copy(data, mime):
        io.say(tool, DEFERRED)


# -- xclip -----------------------------------------------------------------------------

# Option name -> (canonical name, takes a value). xclip (X resources) also takes any
# unambiguous abbreviation of a long name, and one or two dashes here.
XCLIP_OPTIONS = {
    "i": ("in", False),
    "in": ("in", False),
    "o": ("out", False),
    "out": ("out", False),
    "f": ("filter", False),
    "filter": ("filter", False),
    "r": ("rmlastnl", False),
    "rmlastnl": ("rmlastnl", False),
    "l": ("loops", True),
    "loops": ("loops", True),
    "d": ("display", True),
    "display": ("display", True),
    "h": ("help", False),
    "help": ("help", False),
    "sel": ("selection", True),
    "selection": ("selection", True),
    "t": ("target", True),
    "target": ("target", True),
    "noutf8": ("noutf8", False),
    "version": ("version", False),
    "silent": ("silent", False),
    "quiet": ("quiet", False),
    "verbose": ("verbose", False),
    "sensitive": ("sensitive", False),
    "wait": ("wait", True),
}


def _xclip_option(word: str) -> tuple[str, bool]:
    name = word.lstrip("-")
    if name in XCLIP_OPTIONS:
        return XCLIP_OPTIONS[name]
    matches = {XCLIP_OPTIONS[o] for o in XCLIP_OPTIONS if len(o) > 1 and o.startswith(name)}
    if len(matches) != 1 or not name:
        raise Usage(f"unknown or ambiguous option {word}")
    return matches.pop()


def parse_xclip(argv: list[str]) -> tuple[dict[str, str | bool], list[str]]:
    """(options by canonical name, files)."""
    options: dict[str, str | bool] = {}
    files: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "-" or not word.startswith("-"):
            files.append(word)
            continue
        name, takes_value = _xclip_option(word)
        if takes_value:
            value = next(words, None)
            if value is None:
                raise Usage(f"option {word} needs a value")
            options[name] = value
        else:
            options[name] = True
    selection = str(options.get("selection", "p"))[:1].lower()
    if selection not in "psbc":
        raise Usage(f"unknown selection {options['selection']}")
    return options, files


def _read_inputs(io: Streams, files: list[str]) -> bytes:
    if not files:
        return io.stdin.read()
    parts = []
    for name in files:
        if name == "-":
            parts.append(io.stdin.read())
            continue
        try:
            with open(name, "rb") as handle:
                parts.append(handle.read())
        except OSError as error:
            raise Usage(f"{name}: {error.strerror}") from None
    return b"".join(parts)


def _drop_newline(data: bytes) -> bytes:
    return data[:-1] if data.endswith(b"\n") else data


def _targets() -> bytes:
    types = client.available_types()
    names = ["TARGETS", *types]
    if TEXT in types:
        names += X11_TEXT_TARGETS
    return "".join(f"{name}\n" for name in names).encode()


def run_xclip(argv: list[str], io: Streams) -> int:
    try:
        options, files = parse_xclip(argv)
        if options.get("help"):
            io.stdout.write(XCLIP_HELP.encode())
            return 0
        if options.get("version"):
            io.stdout.write(f"xclip version {VERSION}\n".encode())
            return 0
        target = str(options.get("target", TEXT))
        if options.get("out"):
            if target.upper() == "TARGETS":
                data = _targets()
            else:
                data = client.paste_bytes(canonical_type(target))
                if options.get("rmlastnl"):
                    data = _drop_newline(data)
            io.stdout.write(data)
            io.stdout.flush()
            return 0
        mime = canonical_type(target)
        data = _read_inputs(io, files)
        if options.get("filter"):
            io.stdout.write(data)
            io.stdout.flush()
        if options.get("rmlastnl"):
            data = _drop_newline(data)
        _write("xclip", io, data, mime)
        return 0
    except Usage as problem:
        io.say("xclip", f"{problem} (xclip -help lists the options)")
    except ClipboardError as error:
        io.say("xclip", error.message)
    return 1


# -- xsel ------------------------------------------------------------------------------

XSEL_LONG = {
    "append": "a",
    "follow": "f",
    "zeroflush": "z",
    "input": "i",
    "output": "o",
    "clear": "c",
    "delete": "d",
    "primary": "p",
    "secondary": "s",
    "clipboard": "b",
    "keep": "k",
    "exchange": "x",
    "nodetach": "n",
    "verbose": "v",
    "help": "h",
    "version": "version",
    "display": "display",
    "selectionTimeout": "t",
    "logfile": "l",
}
XSEL_FLAGS = set("afzioc dpsbkxnvh".replace(" ", ""))
XSEL_VALUED = {"t", "l", "display"}


def parse_xsel(argv: list[str]) -> set[str]:
    """The flags given, by their short letter (`version`, `display` have none)."""
    flags: set[str] = set()
    words = iter(argv)
    for word in words:
        if word.startswith("--"):
            name, _, inline = word[2:].partition("=")
            if name not in XSEL_LONG:
                raise Usage(f"unknown option {word}")
            flag = XSEL_LONG[name]
            if flag in XSEL_VALUED and not inline and next(words, None) is None:
                raise Usage(f"option {word} needs a value")
            flags.add(flag)
        elif word.startswith("-") and len(word) > 1:
            letters = word[1:]
            for index, letter in enumerate(letters):
                if letter in XSEL_VALUED:
                    if index == len(letters) - 1 and next(words, None) is None:
                        raise Usage(f"option -{letter} needs a value")
                    flags.add(letter)
                    break
                if letter not in XSEL_FLAGS:
                    raise Usage(f"unknown option -{letter}")
                flags.add(letter)
        else:
            raise Usage(f"unexpected argument {word}")
    return flags


def run_xsel(argv: list[str], io: Streams) -> int:
    try:
        flags = parse_xsel(argv)
        if "h" in flags:
            io.stdout.write(XSEL_HELP.encode())
            return 0
        if "version" in flags:
            io.stdout.write(f"xsel version {VERSION}\n".encode())
            return 0
        explicit = flags & set("iaofcdkx")
        output = "o" in flags
        clear = bool(flags & {"c", "d"})
        append = "a" in flags
        read_input = bool(flags & {"i", "f"}) or append
        if not explicit:
            in_tty, out_tty = io.tty(io.stdin), io.tty(io.stdout)
            read_input = not in_tty
            output = not out_tty or (in_tty and out_tty)
        if output:
            io.stdout.write(client.paste_bytes(TEXT))
            io.stdout.flush()
        if clear:
            _write("xsel", io, b"")
        if read_input:
            data = io.stdin.read()
            if append:
                data = client.paste_bytes(TEXT) + data
            _write("xsel", io, data)
        return 0
    except Usage as problem:
        io.say("xsel", f"{problem} (xsel --help lists the options)")
    except ClipboardError as error:
        io.say("xsel", error.message)
    return 1


def _real_tool(name: str) -> None:
    """Outside a notebook server (cgu_lab installed on a desktop), run the X11 tool of that
    name further down the PATH, so that installing cgu_lab does not take the desktop's away."""
    if client.find_socket() or not os.environ.get("DISPLAY"):
        return
    me = os.path.realpath(sys.argv[0])
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder, name)
        if folder and os.access(candidate, os.X_OK) and os.path.realpath(candidate) != me:
            os.execv(candidate, [name, *sys.argv[1:]])  # noqa: S606 - the user's own tool


def xclip() -> None:
    """The `xclip` console script."""
    _real_tool("xclip")
    sys.exit(run_xclip(sys.argv[1:], Streams.system()))


def xsel() -> None:
    """The `xsel` console script."""
    _real_tool("xsel")
    sys.exit(run_xsel(sys.argv[1:], Streams.system()))
