"""`skillmake view [SPEC…]`: serve the review viewer of this project's results on 127.0.0.1."""

from __future__ import annotations

import argparse
import sys
import webbrowser

from skillmake.commands.argparser import Parser, parsed
from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_OK, EXIT_USAGE, SkillmakeError, UsageError
from skillmake.view import data
from skillmake.view.server import ViewServer
from skillmake.view.site import export

USAGE = "usage: skillmake view [SPEC…] [--port N] [--open | --no-open] [--export DIR]"


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="skillmake view", usage_line=USAGE,
        description="Browse results — outputs side by side, transcripts, checks, history — and write feedback. "
                    "Serves on 127.0.0.1 only; Ctrl-C stops it.",
        epilog="every command also takes --root DIR, --color and --no-color")
    parser.add_argument("specs", nargs="*", help="spec names to show (default: every spec with a report)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one, printed)")
    opening = parser.add_mutually_exclusive_group()
    opening.add_argument("--open", dest="open", action="store_true", default=None,
                         help="open a browser on the index (default when the terminal is interactive)")
    opening.add_argument("--no-open", dest="open", action="store_false", help="only print the address")
    parser.add_argument("--export", metavar="DIR",
                        help="write the static pages into DIR instead of serving (as `skillmake report` does into "
                             ".skillmake/site/)")
    parser.add_argument("--root", help=argparse.SUPPRESS)  # the front end reads it (every command takes it)
    return parser


def _say(text: str, *, err: bool = False) -> None:
    write_line(sys.stderr if err else sys.stdout, text)


def main(args: list[str]) -> int:
    try:
        opts = parsed(_parser(), args)
    except UsageError as exc:
        _say(f"skillmake view: {exc.render()}", err=True)
        return EXIT_USAGE
    if isinstance(opts, int):  # --help printed
        return opts
    if not 0 <= opts.port <= 65535:
        _say(f"skillmake view: --port {opts.port} is not a port (0-65535; 0 picks a free one)", err=True)
        return EXIT_USAGE
    from skillmake.commands.specs import project_root
    from skillmake.run.project import Project

    root = project_root()
    try:
        project = Project.open(root)
    except SkillmakeError as exc:
        _say(f"skillmake: {exc.render()}", err=True)
        return int(getattr(exc, "exit_code", EXIT_USAGE))
    source = data.Source.of(project, tuple(opts.specs))
    have = set(data.spec_names(data.Source.of(project)))
    unknown = [n for n in opts.specs if n not in have]
    if unknown:
        _say(f"skillmake view: no report for {', '.join(unknown)}\n  hint: run `skillmake` first; specs with a "
             f"report: {', '.join(sorted(have)) or 'none'}", err=True)
        return EXIT_USAGE
    if opts.export:
        out = export(source, __import__("pathlib").Path(opts.export), root=root)
        _say(f"skillmake view: wrote {out / 'index.html'}")
        return EXIT_OK
    for name in data.spec_names(source):  # so the history's runs from now on can be compared
        report = data.report_of(source, name)
        if report is not None:
            data.archive(source, name, report)
    try:
        server = ViewServer(source, port=opts.port, root=root)
    except OSError as exc:
        _say(f"skillmake view: cannot listen on 127.0.0.1:{opts.port}: {exc.strerror or exc}\n"
             "  hint: pick another --port, or leave it out for a free one", err=True)
        return EXIT_USAGE
    shown = len(data.spec_names(source))
    if not shown:
        names = ", ".join(s.name for s in project.specs) or "none"
        _say(f"skillmake view: no spec has results yet (specs: {names})\n  hint: run `skillmake` first", err=True)
        server.server_close()
        return EXIT_USAGE
    _say(f"skillmake view: {shown} spec(s) at {server.url}  (feedback is saved to "
         f".skillmake/reports/<spec>/feedback.json; Ctrl-C stops)")
    if opts.open or (opts.open is None and sys.stdout.isatty()):
        webbrowser.open(server.url)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        _say("skillmake view: stopped")
    finally:
        server.server_close()
    return EXIT_OK
