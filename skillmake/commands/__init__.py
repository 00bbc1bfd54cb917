"""Layer 9, commands: the `skillmake` front end (cli) and every command (validate, report, import, promote, init,
grade --output, view, compare, rejudge, push/pull, clauditor, caliper …). The top: imports any layer below."""
